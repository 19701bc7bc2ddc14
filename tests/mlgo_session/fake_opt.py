#!/usr/bin/python3
"""A misbehaving opt-19 for kiln's MLGO session tests.

The mode is the part of the program's name after "fake-opt-" (tests make
symlinks), because session types pass no extra flags: good (3 decisions with
LLVM 19's real inliner header, then writes a copy of the input), exit-early,
hang-before-open, hang-after-header, garbage-header, garbage-record,
crash-mid-record, wrong-header, hang (ignores everything, for batch jobs),
memory-hog (after the first decision asks for 1 GiB: fails under a smaller
RLIMIT_AS; refuses to run without one, so as not to eat the machine).
"""
import os
import resource
import shutil
import struct
import sys
import time

NAMES = """sroa_savings sroa_losses load_elimination call_penalty call_argument_setup
load_relative_intrinsic lowered_call_arg_setup indirect_call_penalty jump_table_penalty
case_cluster_penalty switch_default_dest_penalty switch_penalty unsimplified_common_instructions
num_loops dead_blocks simplified_instructions constant_args constant_offset_ptr_args callsite_cost
cold_cc_penalty last_call_to_static_bonus is_multiple_blocks nested_inlines
nested_inline_cost_estimate threshold callee_basic_block_count callsite_height node_count
nr_ctant_params cost_estimate edge_count caller_users caller_conditionally_executed_blocks
caller_basic_block_count callee_conditionally_executed_blocks callee_users is_callee_avail_external
is_caller_avail_external inlining_default""".split()

def spec(name):
    return '{"name":"%s","type":"int64_t","port":0,"shape":[1]}' % name

def header(names):
    return ('{"features":[' + ",".join(spec(n) for n in names) + '],"advice":' +
            spec("inlining_decision") + "}\n").encode()

def record(index):
    return b'{"observation":%d}\n' % index + b"".join(
        struct.pack("<q", 1 if n == "callee_basic_block_count" else 0) for n in NAMES) + b"\n"

def main():
    mode = os.path.basename(sys.argv[0]).split("fake-opt-", 1)[-1]
    base = output = inp = None
    args = sys.argv[1:]
    for i, arg in enumerate(args):
        if "-channel-base=" in arg:
            base = arg.split("-channel-base=", 1)[1]
        elif arg == "-o":
            output = args[i + 1]
        elif not arg.startswith("-") and (i == 0 or args[i - 1] != "-o"):
            inp = arg
    if mode == "exit-early":
        sys.stderr.write("error: fake opt cannot read its input\n")
        sys.exit(3)
    if mode in ("hang-before-open", "hang") or base is None:
        time.sleep(60)
        sys.exit(5)
    advice = open(base + ".in", "rb")
    records = open(base + ".out", "wb")
    if mode == "garbage-header":
        records.write(b"\x00\xffthis is not json\n")
        records.flush()
        time.sleep(60)
    names = NAMES[:-1] + ["surprise_feature"] if mode == "wrong-header" else NAMES
    records.write(header(names) + b'{"context":"main"}\n')
    records.flush()
    if mode == "hang-after-header":
        time.sleep(60)
    if mode == "garbage-record":
        records.write(b'{"observation":0}\nxyz')
        records.close()
        time.sleep(60)
    for i in range(3):
        rec = record(i)
        if mode == "memory-hog" and i == 1:
            soft, _ = resource.getrlimit(resource.RLIMIT_AS)
            if soft == resource.RLIM_INFINITY or soft > (1 << 30):
                sys.stderr.write("fake opt: no address-space limit below 1 GiB\n")
                os._exit(2)
            try:
                hog = bytearray(1 << 30)
            except MemoryError:
                sys.stderr.write("fake opt: MemoryError, out of address space\n")
                os._exit(1)
            del hog
        if mode == "crash-mid-record" and i == 1:
            records.write(rec[:20])
            records.flush()
            sys.stderr.write("fake opt crashed in the middle of a record\n")
            os._exit(1)
        records.write(rec)
        records.flush()
        if len(advice.read(8)) != 8:
            sys.exit(4)
    records.close()
    advice.close()
    shutil.copyfile(inp, output)

main()
