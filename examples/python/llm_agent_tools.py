#!/usr/bin/env python3
"""An LLM agent loop on kiln's compiler tools, end to end, without a model.

The tools are registered from kiln.tools.schema() (the function-calling format
OpenAI-compatible trainers take as it is). Each rollout is a chat: the
"model" answers with assistant messages carrying tool_calls, as a trainer's
generation step would produce them, and every call is answered by a tool
message from kiln.tools.ToolRunner. A scripted policy stands in for the model
(no weights are downloaded): it reads the baselines, tries a pass list in an
episode (one pass misspelled, fixed from the error's suggestion), forks the
episode to try two continuations, reads the IR within a budget, validates the
better state and ends its episodes. The rollouts run concurrently (asyncio)
and share pass-list prefixes, which a worker replays from its transition
cache rather than running again.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/llm_agent_tools.py

--transcript FILE writes every rollout's messages and the tools (JSON).
"""

import argparse
import asyncio
import json
import re

import kiln
import kiln.tools

# What the scripted "model" tries: a shared opening, then a continuation per rollout.
OPENING = ["sroa", "instcombin", "simplifycfg"]  # the typo is deliberate
CONTINUATIONS = [
    (["gvn", "instcombine"], ["loop-rotate", "licm", "instcombine"]),
    (["early-cse", "simplifycfg"], ["reassociate", "gvn"]),
    (["dse", "adce"], ["sccp", "simplifycfg", "instcombine"]),
    (["mem2reg", "gvn"], ["jump-threading", "simplifycfg"]),
]


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", default="benchmark://kiln-bench-v0/crc32")
    parser.add_argument("--rollouts", type=int, default=4, help="concurrent chats (1 to 16)")
    parser.add_argument(
        "--cluster", default=None, help="coordinator tcp://host:port (default: embedded)"
    )
    parser.add_argument("--transcript", default=None, help="write the chats here (JSON)")
    args = parser.parse_args()
    if not 1 <= args.rollouts <= 16:
        parser.error("--rollouts must be within 1 to 16")
    return args


class ScriptedPolicy:
    """Stands in for the model: reads the chat, writes the next tool calls."""

    def __init__(self, benchmark, continuations):
        self.benchmark = benchmark
        self.first, self.second = continuations
        self.turn = self._script()
        self.answers = None

    def respond(self, messages):
        """The next assistant message, given the chat so far (tool answers last)."""
        self.answers = [json.loads(m["content"]) for m in messages if m["role"] == "tool"]
        try:
            calls = next(self.turn)
        except StopIteration as done:
            return {"role": "assistant", "content": done.value}
        self.calls_made = getattr(self, "calls_made", 0)
        tool_calls = []
        for name, arguments in calls:
            self.calls_made += 1
            tool_calls.append({
                "id": f"call_{self.calls_made}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            })
        return {"role": "assistant", "content": None, "tool_calls": tool_calls}

    def last(self, count=1):
        return self.answers[-count:] if count > 1 else self.answers[-1]

    def _script(self):
        benchmark = self.benchmark
        yield [("compare_baselines", {"benchmark": benchmark})]
        oz = self.last()["Oz"]
        passes = list(OPENING)
        yield [("apply_passes", {"benchmark": benchmark, "passes": passes, "keep_episode": True,
                                 "observe": ["Autophase"]})]
        answer = self.last()
        if "error" in answer and answer["error"]["code"] == "unknown_pass":
            # Read the pass and its suggestion from the message, as a model would.
            message = answer["error"]["message"]
            wrong = re.search(r"unknown pass '([^']+)'", message).group(1)
            suggested = re.search(r"did you mean '([^']+)'", message).group(1)
            passes = [suggested if p == wrong else p for p in passes]
            yield [("apply_passes", {"benchmark": benchmark, "passes": passes,
                                     "keep_episode": True})]
            answer = self.last()
        episode = answer["episode"]
        yield [("fork_episode", {"episode": episode})]
        other = self.last()["episode"]
        yield [("apply_passes", {"episode": episode, "passes": self.first}),
               ("apply_passes", {"episode": other, "passes": self.second})]
        first, second = self.last(2)
        best, worse = (episode, other)
        if second["instruction_count"]["after"] < first["instruction_count"]["after"]:
            best, worse = (other, episode)
        count = min(first["instruction_count"]["after"], second["instruction_count"]["after"])
        yield [("ir_text", {"episode": best, "max_bytes": 2000}),
               ("validate", {"episode": best}),
               ("compare_baselines", {"episode": best})]
        ir, verdict, baselines = self.last(3)
        yield [("end_episode", {"episode": best}), ("end_episode", {"episode": worse})]
        return (f"{count} instructions ({baselines['ratio_to_Oz']:.3f} of -Oz's {oz}), "
                f"{verdict['verdict']}; read {ir['bytes_shown']} of {ir['bytes_total']} IR bytes")


async def rollout(runner, tools, benchmark, continuations):
    """One chat: the model's turns and the tools' answers until it stops."""
    policy = ScriptedPolicy(benchmark, continuations)
    messages = [
        {"role": "system", "content": "Make the program smaller than -Oz. Tools: "
         + ", ".join(tool["function"]["name"] for tool in tools)},
        {"role": "user", "content": f"Optimize {benchmark}."},
    ]
    while True:
        reply = policy.respond(messages)
        messages.append(reply)
        if not reply.get("tool_calls"):
            return messages
        # A trainer's rollout worker answers a turn's calls together.
        answers = await asyncio.gather(*[
            runner.acall(call["function"]["name"], call["function"]["arguments"])
            for call in reply["tool_calls"]
        ])
        for call, answer in zip(reply["tool_calls"], answers):
            messages.append({"role": "tool", "tool_call_id": call["id"],
                             "content": json.dumps(answer)})


async def main_async(args):
    with kiln.tools.ToolRunner(cluster=args.cluster, caller="llm-agent-example") as runner:
        tools = runner.schema()
        chats = await asyncio.gather(*[
            rollout(runner, tools, args.benchmark, CONTINUATIONS[i % len(CONTINUATIONS)])
            for i in range(args.rollouts)
        ])
        for i, chat in enumerate(chats):
            print(f"rollout {i}: {chat[-1]['content']}")
        stats = runner.stats()
        # Passes sent to a worker may still be replayed there from its
        # transition cache (another rollout ran the same step): docs/tools.md.
        print(f"{stats['calls']} tool calls, {stats['errors']} errors; "
              f"{stats['passes_applied']} of {stats['passes_asked']} passes sent to a worker, "
              f"{stats['prefix_hits']} calls started from a cached prefix")
        if args.transcript:
            with open(args.transcript, "w", encoding="utf-8") as out:
                json.dump({"tools": tools, "result_schemas": runner.result_schemas(),
                           "chats": chats}, out, indent=1)


def main():
    asyncio.run(main_async(parse_args()))


if __name__ == "__main__":
    main()
