"""The paired-job protocol on a machine starved of CPU (issue 35, section 5).

On 2 cores at load 5-9, ``test_a_daemon_writing_after_the_job_does_not_reach_the_next[docker]``
lost the next job's candidate output. The previous job had nothing to do with it: that test's
honest judge exited right after the candidate's last message, and the judge's exit ends the job,
so the candidate was killed before its exit flush had written what it printed (reproduced without
any daemon, 2 jobs in 300 beside 8 busy loops; 0 in 300 once the judge waits). The contract is now
explicit (``rewardsmith.sandbox.job.Peer``): the candidate's output is what it had written when the
job ended, and a judge that reports on it waits for end-of-file on fd 3 first (which comes, at the
latest, at the candidate's exit, after its streams are flushed). The runner also
counts a process as gone only when all of its threads are (a leader that ended with
``pthread_exit`` is a zombie while its other threads still write).

Every test here runs beside busy loops the module starts (three per CPU) and kills at the end, on
every backend: honest pairs keep every byte both sides wrote; daemons and threads of a job that
keep writing after it never reach the next job; the judge's exit still ends a job.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from test_sandbox_pairs import WAIT_FOR_CANDIDATE, _killed, _make, pair
from test_sandbox_shared_dir import OPENING_JUDGE, assert_shared_round_trip

from rewardsmith.sandbox.job import Job
from rewardsmith.sandbox.limits import Limits
from rewardsmith.sandbox.runner import SHARED_ENV

pytestmark = pytest.mark.slow

BACKENDS = ["local", "local-plain", pytest.param("docker", marks=pytest.mark.docker)]
ROUNDS = 8


@pytest.fixture(scope="module", autouse=True)
def cpu_hog():
    """Busy loops on every CPU, three deep, for the whole module; each killed by its pid after."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(3 * (os.cpu_count() or 1))]
    yield loops
    for loop in loops:
        loop.kill()
    for loop in loops:
        loop.wait()


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request, cpu_hog):
    b = _make(request.param)
    b.kind = request.param
    yield b
    b.close()


def test_the_hog_is_running(cpu_hog):
    assert all(loop.poll() is None for loop in cpu_hog)


# The candidate prints without flushing (its output reaches the pipe only at its exit flush), more
# than a pipe holds on stderr, and tells the judge it is done; the judge waits for its end (EOF on fd 3).
BUFFERED_CANDIDATE = (
    "import socket, sys\n"
    "s = socket.socket(fileno=3)\n"
    "n = int(s.recv(16))\n"
    'print(\'{"n": %d, "pad": "%s"}\' % (n, \'x\' * 1000))\n'
    "sys.stderr.write('e' * 300_000)\n"
    "s.sendall(b'done')\n"
)
WAITING_JUDGE = (
    "import socket, sys\n"
    "s = socket.socket(fileno=3)\n"
    "s.sendall(sys.argv[1].encode())\n"
    "print('candidate says', s.recv(4).decode())\n"
) + WAIT_FOR_CANDIDATE


def test_honest_pairs_keep_every_byte_both_sides_wrote(backend):
    for n in range(ROUNDS):
        job = pair(BUFFERED_CANDIDATE, WAITING_JUDGE)
        job.judge.command = [*job.judge.command, str(n)]
        result = backend.run(job)
        assert (result.status, result.exit_code, result.stdout) == ("ok", 0, "candidate says done\n"), result
        candidate = result.details["candidate"]
        # It closed fd 3 while finishing: it may still have been tearing down when the judge's exit ended the job.
        assert candidate["exit_code"] == 0 or _killed(candidate["exit_code"]), candidate
        assert json.loads(candidate["stdout"]) == {"n": n, "pad": "x" * 1000}, candidate["stdout"][:200]
        assert candidate["stderr"] == "e" * 300_000 and not candidate["stderr_truncated"]
        assert result.details["clean"] is True, result.details


# What keeps writing after the job: a double-forked daemon, and a thread whose process's main
# thread has ended (pthread_exit: the leader is a zombie, the thread runs on). Both write into the
# shared subdirectory the judge opened and into the candidate's work directory, without pause.
LATE_WRITERS = (
    "import ctypes, os, socket, threading\n"
    "s = socket.socket(fileno=3)\n"
    "case = s.recv(4096).decode().split('\\n')[0]\n"
    "work = os.getcwd()\n"
    "def write_forever(tag):\n"
    "    i = 0\n"
    "    while True:\n"
    "        for where in (case, work, case + '/sub'):\n"
    "            try:\n"
    "                os.makedirs(where, exist_ok=True)\n"
    "                open(f'{where}/{tag}{i}', 'w').close()\n"
    "            except OSError:\n"
    "                pass\n"
    "        i += 1\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    if os.fork() == 0:\n"
    "        os.close(3)\n"
    "        write_forever('daemon')\n"
    "    os._exit(0)\n"
    "threading.Thread(target=write_forever, args=('thread',)).start()\n"
    "s.sendall(b'late')\n"
    "ctypes.CDLL(None).pthread_exit(None)\n"
)
# The next job: both sides list what they find (their own directory, the shared one) and the
# candidate's buffered output must come through whole.
LISTING_CANDIDATE = "import json, os\nprint(json.dumps(sorted(os.listdir('.'))))\n"
LISTING_JUDGE = (
    "import json, os\n"
    f"shared = os.environ[{SHARED_ENV!r}]\n"
    "print(json.dumps([sorted(os.listdir(shared)), sorted(os.listdir('.'))]))\n"
) + WAIT_FOR_CANDIDATE


def test_what_writes_after_a_job_never_reaches_the_next(backend):
    for _ in range(ROUNDS):
        late = backend.run(pair(LATE_WRITERS, OPENING_JUDGE))
        assert (late.status, late.stdout) == ("ok", "judge late\n"), late
        after = backend.run(pair(LISTING_CANDIDATE, LISTING_JUDGE))
        assert (after.status, after.exit_code) == ("ok", 0), after
        assert json.loads(after.stdout) == [[], ["judge.py"]], after
        assert json.loads(after.details["candidate"]["stdout"]) == ["cand.py"], after
        assert after.details["clean"] is True, after.details
    assert_shared_round_trip(backend)


def test_the_judges_exit_still_ends_the_job(backend):
    """Waiting is the judge's choice: a judge that does not wait ends the job, and a candidate that
    loops is killed then; what the candidate flushed before is in the result."""
    candidate = (
        "import socket\nprint('flushed', flush=True)\nsocket.socket(fileno=3).sendall(b'go')\nwhile True:\n    pass\n"
    )
    judge = "import socket\nprint(socket.socket(fileno=3).recv(2).decode())\n"
    for _ in range(3):
        result = backend.run(pair(candidate, judge, wall_s=30, cpu_s=60))
        assert (result.status, result.exit_code, result.stdout) == ("ok", 0, "go\n"), result
        assert result.details["candidate"]["stdout"] == "flushed\n", result
        assert _killed(result.details["candidate"]["exit_code"]), result  # by the judge's exit, not the limit


# Leaves a chain of 5,000 directories in its work directory and sleeps past its wall-clock limit.
# Removing such a chain took 10 s of wall time on a loaded disk (0.5 s of CPU): the local backend's
# runners keep their directories on disk. A backend that waited only 5 s past the limit called the
# runner dead: status "error", which a completion could force at will.
DEEP_THEN_SLEEP = """
import os, time
os.mkdir("deep")
os.chdir("deep")
for _ in range(5_000):
    os.mkdir("d")
    os.chdir("d")
print("deep", flush=True)
time.sleep(1000)
"""


def test_a_job_that_leaves_a_deep_tree_and_runs_out_of_time_is_answered(backend):
    """The backend waits past the wall limit for as long as the runner's own work after a job may
    take (POST_JOB_S) and a little more: a slow emptying is not taken for a dead runner."""
    result = backend.run(
        Job(command=["python3", "deep.py"], files={"deep.py": DEEP_THEN_SLEEP}, limits=Limits(wall_s=10, cpu_s=30))
    )
    # On a starved disk the chain may still be growing at the limit: either way the job's answer is its timeout.
    assert result.status == "timeout" and result.stdout in ("deep\n", ""), result
    after = backend.run(pair(LISTING_CANDIDATE, LISTING_JUDGE))
    assert json.loads(after.details["candidate"]["stdout"]) == ["cand.py"], after
