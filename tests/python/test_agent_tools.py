"""kiln.tools: the generated tool list is valid JSON Schema (Draft 2020-12)
in the function-calling format, every answer (results and errors) matches
its tool's result schema, and examples/python/llm_agent_tools.py runs end to
end with every call and answer of its chats checked."""

import asyncio
import json
import os
import pathlib
import socket
import subprocess
import sys

import jsonschema
import pytest

import kiln
import kiln.tools

BENCHMARK = "benchmark://kiln-bench-v0/crc32"


@pytest.fixture(scope="module")
def runner():
    with kiln.tools.ToolRunner(caller="test-agent-tools") as tools:
        yield tools


def validator(schema):
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def check_answer(results, tool, answer):
    """The answer matches its tool's result schema, or the error's."""
    schema = results["error"] if "error" in answer else results[tool]
    validator(schema).validate(answer)


def test_the_tool_list_is_valid_json_schema_in_the_function_calling_format(runner):
    tools = runner.schema()
    names = [tool["function"]["name"] for tool in tools]
    assert names == ["apply_passes", "observe", "ir_text", "validate", "compare_baselines",
                     "fork_episode", "end_episode"]
    for tool in tools:
        assert set(tool) == {"type", "function"} and tool["type"] == "function"
        assert set(tool["function"]) == {"name", "description", "parameters"}
        assert tool["function"]["description"]
        validator(tool["function"]["parameters"])
    # Generated from the llvm type's spaces: the passes are its action names.
    passes = tools[0]["function"]["parameters"]["properties"]["passes"]["items"]["enum"]
    assert passes == kiln.make("llvm-v0").action_space.names
    # kiln.tools.schema() is the same list.
    assert kiln.tools.schema() == tools


def test_kiln_tools_schema_prints_the_same_tools_and_result_schemas(runner):
    binary = os.environ.get("KILN_BINARY")
    if not binary:
        pytest.skip("KILN_BINARY is not set (ctest sets it to the built kiln)")
    for flags, expected in (([], runner.schema()), (["--results"], runner.result_schemas())):
        done = subprocess.run([binary, "tools", "schema", *flags], capture_output=True, text=True,
                              timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == expected


def test_kiln_tools_serve_on_a_port_in_use_fails_before_any_cluster(tmp_path):
    """The port is bound before the cluster is reached or started: with a
    port in use and a --cluster nobody serves, the error is the port's."""
    binary = os.environ.get("KILN_BINARY")
    if not binary:
        pytest.skip("KILN_BINARY is not set (ctest sets it to the built kiln)")
    keys = tmp_path / "keys"
    keys.write_text("key-of-a-0123456789abcdef alice\n")
    keys.chmod(0o600)
    with socket.socket() as busy, socket.socket() as closed:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        closed.bind(("127.0.0.1", 0))  # bound, never listening: no coordinator there
        done = subprocess.run(
            [binary, "tools", "serve", "--keys", str(keys),
             "--listen", f"127.0.0.1:{busy.getsockname()[1]}",
             "--cluster", f"tcp://127.0.0.1:{closed.getsockname()[1]}"],
            capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode != 0, done.stdout
    assert "cannot bind" in done.stderr and "--listen" in done.stderr, done.stderr
    assert "serving" not in done.stdout, done.stdout


def test_every_answer_matches_its_result_schema(runner):
    results = runner.result_schemas()
    for name, schema in results.items():
        validator(schema)
    calls = [
        ("apply_passes", {"benchmark": BENCHMARK, "passes": ["sroa"], "keep_episode": True,
                          "observe": ["Autophase", "AutophaseDict", "InstCount",
                                      "ObjectTextSizeBytes", "IrSha1"]}),
        ("apply_passes", {"benchmark": BENCHMARK, "passes": ["sroa", "gvn"]}),
        ("observe", {"benchmark": BENCHMARK, "passes": ["sroa"],
                     "observe": ["IrInstructionCountOz", "InstCountDict"]}),
        ("ir_text", {"benchmark": BENCHMARK, "max_bytes": 500}),
        ("validate", {"benchmark": BENCHMARK, "passes": ["sroa"]}),
        ("compare_baselines", {"benchmark": BENCHMARK}),
        ("apply_passes", {"benchmark": BENCHMARK, "passes": ["no-such-pass"]}),
        ("apply_passes", "{not json"),
        ("no_such_tool", {}),
        ("observe", {"episode": "ep-0", "observe": ["IrInstructionCount"]}),
        ("apply_passes", {"module": "not LLVM IR", "passes": []}),
    ]
    answers = []
    for name, arguments in calls:
        answer = runner.call(name, arguments)
        check_answer(results, name, answer)
        answers.append(answer)
    assert [a["error"]["code"] for a in answers if "error" in a] == [
        "unknown_pass", "invalid_json", "unknown_tool", "unknown_episode", "invalid_module"]
    episode = answers[0]["episode"]
    for name in ("fork_episode", "end_episode"):
        answer = runner.call(name, {"episode": episode})
        check_answer(results, name, answer)
        assert "error" not in answer, answer


def test_batches_and_asyncio_answer_every_call_in_order(runner):
    calls = [("apply_passes", {"benchmark": BENCHMARK, "passes": ["sroa", p]})
             for p in ("gvn", "instcombine", "simplifycfg")]
    batch = runner.call_batch(calls + [{"function": {"name": "nope", "arguments": "{}"}}])
    assert [a.get("passes_applied") for a in batch] == [2, 2, 2, None]
    assert batch[-1]["error"]["code"] == "unknown_tool"

    async def concurrently():
        return await asyncio.gather(*[runner.acall(name, args) for name, args in calls])

    assert [a["instruction_count"] for a in asyncio.run(concurrently())] == [
        a["instruction_count"] for a in batch[:3]]


def test_another_callers_episodes_are_not_yours():
    with kiln.tools.ToolRunner(caller="owner") as owner, \
            kiln.tools.ToolRunner(caller="other") as other:
        episode = owner.call("apply_passes", {"benchmark": BENCHMARK, "passes": [],
                                              "keep_episode": True})["episode"]
        answer = other.call("end_episode", {"episode": episode})
        assert answer["error"]["code"] == "unknown_episode"
        assert owner.call("end_episode", {"episode": episode}) == {"ended": True}


def test_the_agent_loop_example_runs_and_every_message_checks(tmp_path):
    source = pathlib.Path(os.environ.get("KILN_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
    transcript = tmp_path / "chats.json"
    done = subprocess.run(
        [sys.executable, str(source / "examples" / "python" / "llm_agent_tools.py"),
         "--rollouts", "2", "--transcript", str(transcript)],
        capture_output=True, text=True, timeout=240, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "rollout 1:" in done.stdout, done.stdout
    recorded = json.loads(transcript.read_text())
    parameters = {t["function"]["name"]: validator(t["function"]["parameters"])
                  for t in recorded["tools"]}
    results = recorded["result_schemas"]
    checked = 0
    for chat in recorded["chats"]:
        asked = {}
        for message in chat:
            for call in message.get("tool_calls") or []:
                asked[call["id"]] = call["function"]
            if message["role"] != "tool":
                continue
            function = asked[message["tool_call_id"]]
            arguments = json.loads(function["arguments"])
            answer = json.loads(message["content"])
            check_answer(results, function["name"], answer)
            errors = list(parameters[function["name"]].iter_errors(arguments))
            # The example's one deliberate typo is outside the schema's enum
            # and is refused as unknown_pass; every other call is valid.
            if "error" in answer:
                assert answer["error"]["code"] == "unknown_pass" and errors, answer
            else:
                assert not errors, (function, errors)
            checked += 1
        assert chat[-1]["role"] == "assistant" and "valid" in chat[-1]["content"]
    assert checked >= 2 * 10
