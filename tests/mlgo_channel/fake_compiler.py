#!/usr/bin/python3
"""Plays opt/llc's side of the MLGO interactive channel for kiln's tests.

Reads BASE from -*-interactive-channel-base=BASE and the output path from -o,
then behaves as --fake-mode=MODE says (good, exit-early, hang-before-open,
hang-after-header, crash-mid-record, garbage, fail-at-end, no-output).
"""
import os
import struct
import sys
import time

def spec(name, typ, shape):
    return '{"name":"%s","type":"%s","port":0,"shape":[%s]}' % (
        name, typ, ",".join(str(d) for d in shape))

HEADER = ('{"features":[' + spec("callee_basic_block_count", "int64_t", [1]) + "," +
          spec("cost", "float", [1]) + "," + spec("inlining_default", "int64_t", [1]) +
          '],"advice":' + spec("inlining_decision", "int64_t", [1]) + "}\n").encode()

def record(index, slot, cost):
    return (b'{"observation":%d}\n' % index + struct.pack("<q", slot) +
            struct.pack("<f", cost) + struct.pack("<q", 0) + b"\n")

def main():
    base = output = None
    mode = "good"
    args = sys.argv[1:]
    for i, arg in enumerate(args):
        if "-channel-base=" in arg:
            base = arg.split("-channel-base=", 1)[1]
        elif arg == "-o":
            output = args[i + 1]
        elif arg.startswith("--fake-mode="):
            mode = arg.split("=", 1)[1]
    if mode == "exit-early":
        sys.stderr.write("error: fake compiler cannot read its input\n")
        sys.exit(3)
    if mode == "hang-before-open":
        time.sleep(60)
    advice = open(base + ".in", "rb")
    records = open(base + ".out", "wb")
    if mode == "garbage":
        records.write(b"this is not json\n")
        records.flush()
        time.sleep(60)
    records.write(HEADER + b'{"context":"main"}\n')
    records.flush()
    if mode == "hang-after-header":
        time.sleep(60)
    answers = []
    for i, slot in enumerate([1, 0, 1]):
        rec = record(i, slot, 0.5 * i)
        if mode == "crash-mid-record" and i == 1:
            records.write(rec[: len(rec) - 7])
            records.flush()
            sys.stderr.write("fake compiler crashed in the middle of a record\n")
            os._exit(1)
        records.write(rec)
        records.flush()
        data = advice.read(8)
        if len(data) != 8:
            sys.stderr.write("short advice\n")
            sys.exit(4)
        answers.append(str(struct.unpack("<q", data)[0]))
    records.close()
    advice.close()
    if mode == "fail-at-end":
        sys.stderr.write("LLVM ERROR: fake failure after the episode\n")
        sys.exit(2)
    if mode != "no-output":
        with open(output, "w") as out:
            out.write(",".join(answers))

main()
