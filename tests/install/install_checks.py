"""What the install tests share: running a command, the public headers'
rules, building an example as a project of its own, and running the
examples' worker and client in a cluster of an installed `kiln`."""

import os
import subprocess
import time


def run(args, **kwargs):
    print("+", " ".join(args), flush=True)
    return subprocess.run(args, check=True, **kwargs)


def check_public_headers(include_dir):
    """Only the public headers are installed: nothing of the runtime's inside
    (e.g. the session host), and none brings ZeroMQ, Cap'n Proto or kiln's
    generated schema into a user's code."""
    headers = os.path.join(include_dir, "kiln")
    for public in ("kit/compilation_session.h", "kit/run_worker.h", "client/client.h",
                   "status.h", "version.h", "error_codes.h"):
        assert os.path.exists(os.path.join(headers, public)), f"{public} is not installed"
    installed = {name for _, _, files in os.walk(headers) for name in files}
    assert "session_host.h" not in installed, "the worker's session host is installed"
    # A user's own programs as benchmarks, for kiln::client users.
    assert os.path.exists(os.path.join(headers, "programs", "make_benchmark.h"))
    assert not os.path.exists(os.path.join(headers, "schema")), "schema headers installed"
    for folder, _, files in os.walk(headers):
        for name in files:
            with open(os.path.join(folder, name)) as header:
                text = header.read()
            for banned in ("<zmq.hpp>", "<capnp/", "<kj/", "kiln.capnp.h"):
                assert banned not in text, f"{name} includes {banned}"


def build_example(source, build, generator, prefix):
    run(["cmake", "-S", source, "-B", build, "-G", generator, "-DCMAKE_BUILD_TYPE=Release",
         f"-DCMAKE_PREFIX_PATH={prefix}"], stdout=subprocess.DEVNULL)
    run(["cmake", "--build", build], stdout=subprocess.DEVNULL)


def stop(process):
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def run_counter_cluster(kiln, worker_program, client_program):
    """The installed kiln's coordinator, the example's worker serving the
    `counter` session type, and the example client stepping a session on it."""
    coordinator = subprocess.Popen(
        [kiln, "coordinator", "--listen", "tcp://127.0.0.1:0", "--log-level", "warn"],
        stdout=subprocess.PIPE, text=True)
    worker = None
    try:
        announced = coordinator.stdout.readline().split()
        assert len(announced) == 2, f"the coordinator announced {announced!r}"
        endpoint = announced[1]
        worker = subprocess.Popen([worker_program, "--coordinator", endpoint, "--slots", "1",
                                   "--log-level", "warn"])
        # The worker registers within a heartbeat or two; bounded.
        deadline = time.monotonic() + 30
        while True:
            result = subprocess.run([client_program, endpoint], capture_output=True, text=True,
                                    timeout=60)
            if result.returncode == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        print(result.stdout, result.stderr, flush=True)
        assert result.returncode == 0, result.stderr
        words = result.stdout.split()
        assert words[0] == "text" and words[1].endswith("ab"), result.stdout
        assert words[2] == "length" and int(words[3]) == len(words[1]), result.stdout
    finally:
        if worker is not None:
            stop(worker)
        stop(coordinator)
