"""kiln as a kit, the way a user takes it: `cmake --install` into a scratch
prefix, the examples built as projects of their own against that prefix
(find_package(kiln), kiln::session and kiln::client), then run together with
the installed `kiln` binary: its coordinator, the example's worker serving the
`counter` session type, and the example client stepping a session on it.

Usage: test_install.py BUILD_DIR SOURCE_DIR CMAKE_GENERATOR
"""

import os
import subprocess
import sys
import tempfile
import time

BUILD, SOURCE, GENERATOR = sys.argv[1:4]


def run(args, **kwargs):
    print("+", " ".join(args), flush=True)
    return subprocess.run(args, check=True, **kwargs)


def build_example(name, prefix, scratch):
    build = os.path.join(scratch, name)
    run(["cmake", "-S", os.path.join(SOURCE, "examples", name), "-B", build, "-G", GENERATOR,
         "-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_PREFIX_PATH={prefix}"],
        stdout=subprocess.DEVNULL)
    run(["cmake", "--build", build], stdout=subprocess.DEVNULL)
    return build


def stop(process):
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def main():
    with tempfile.TemporaryDirectory(prefix="kiln-install-") as scratch:
        prefix = os.path.join(scratch, "prefix")
        run(["cmake", "--install", BUILD, "--prefix", prefix], stdout=subprocess.DEVNULL)
        kiln = os.path.join(prefix, "bin", "kiln")

        version = run([kiln, "--version"], capture_output=True, text=True).stdout.split("\n")
        assert version[0].startswith("kiln "), version
        assert version[1].startswith("protocol "), version
        assert version[2].startswith("LLVM "), version

        # Only the public headers are installed: nothing of the runtime's
        # inside (e.g. the session host) is there to include by mistake.
        headers = os.path.join(prefix, "include", "kiln")
        assert os.path.exists(os.path.join(headers, "worker", "kit", "compilation_session.h"))
        assert os.path.exists(os.path.join(headers, "worker", "run_worker.h"))
        assert not os.path.exists(os.path.join(headers, "worker", "session_host.h"))
        # A user's own programs as benchmarks, for kiln::client users.
        assert os.path.exists(os.path.join(headers, "programs", "make_benchmark.h"))
        # ... and none of them brings ZeroMQ, Cap'n Proto or kiln's generated
        # schema into the user's code.
        assert not os.path.exists(os.path.join(headers, "schema")), "schema headers installed"
        for folder, _, files in os.walk(headers):
            for name in files:
                text = open(os.path.join(folder, name)).read()
                for banned in ("<zmq.hpp>", "<capnp/", "<kj/", "kiln.capnp.h"):
                    assert banned not in text, f"{name} includes {banned}"

        worker_build = build_example("cpp_session", prefix, scratch)
        client_build = build_example("cpp_client", prefix, scratch)

        coordinator = subprocess.Popen(
            [kiln, "coordinator", "--listen", "tcp://127.0.0.1:0", "--log-level", "warn"],
            stdout=subprocess.PIPE, text=True)
        worker = None
        try:
            announced = coordinator.stdout.readline().split()
            assert len(announced) == 2, f"the coordinator announced {announced!r}"
            endpoint = announced[1]
            worker = subprocess.Popen(
                [os.path.join(worker_build, "kiln-counter-worker"), "--coordinator", endpoint,
                 "--slots", "1", "--log-level", "warn"])
            client = os.path.join(client_build, "kiln-counter-client")
            # The worker registers within a heartbeat or two; bounded.
            deadline = time.monotonic() + 30
            while True:
                result = subprocess.run([client, endpoint], capture_output=True, text=True,
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
    print("install, out-of-tree builds and the cluster run: ok")


if __name__ == "__main__":
    main()
