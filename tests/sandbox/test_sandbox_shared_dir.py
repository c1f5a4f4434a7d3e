"""A paired job's shared directory: the judge hands a subdirectory of it (pytest's ``tmp_path``)
to the candidate's code, which reads and writes files there.

Both sides get its path in ``REWARDSMITH_SHARED_DIR`` and see it there. At the start of a job it
is empty, the judge's, mode 0711 (the candidate may traverse it, not list it or create anything
at its top); after every job it is emptied, whatever either side left (trees thousands deep, a
flood of files, closed or sticky directories, links pointing out, a daemon still writing), and
nothing a link points to is touched. Each hostile job is followed by an honest paired job.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from test_sandbox_pairs import WAIT_FOR_CANDIDATE, _make, assert_next_pair_is_normal, pair

from rewardsmith.sandbox.job import Job
from rewardsmith.sandbox.runner import SHARED_ENV, SHARED_MODE, Runner

pytestmark = pytest.mark.slow

BACKENDS = ["local", "local-plain", pytest.param("docker", marks=pytest.mark.docker)]


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request):
    b = _make(request.param)
    b.kind = request.param
    yield b
    b.close()


def _uids(backend) -> bool:
    """Whether the candidate and the judge are different uids here (we are root)."""
    return os.getuid() == 0


# The judge opens a subdirectory to the candidate (as code/sandboxed/judge.py does with tmp_path), writes an
# input there, tells the candidate where it is, and reads back what the candidate wrote.
HONEST_JUDGE = (
    "import json, os, socket\n"
    f"shared = os.environ[{SHARED_ENV!r}]\n"
    "info = os.stat(shared)\n"
    "found = {'listing': sorted(os.listdir(shared)), 'mode': oct(info.st_mode & 0o7777),\n"
    "         'mine': info.st_uid == os.getuid(), 'path': shared}\n"
    "case = os.path.join(shared, 'case')\n"
    "os.mkdir(case)\n"
    "os.chmod(case, 0o777)\n"
    "with open(os.path.join(case, 'input.txt'), 'w') as handle:\n"
    "    handle.write('hello from the judge')\n"
    "s = socket.socket(fileno=3)\n"
    "s.sendall(case.encode())\n"
    "assert s.recv(4) == b'done'\n"
    "with open(os.path.join(case, 'output.txt')) as handle:\n"
    "    found['output'] = handle.read()\n"
    "print(json.dumps(found))\n"
    "s.recv(1)\n"  # until the candidate has exited: its output is in the result only then (see Peer)
)
HONEST_CANDIDATE = (
    "import json, os, socket\n"
    "s = socket.socket(fileno=3)\n"
    "case = s.recv(4096).decode()\n"
    f"shared = os.environ[{SHARED_ENV!r}]\n"
    "with open(os.path.join(case, 'input.txt')) as handle:\n"
    "    data = handle.read()\n"
    "with open(os.path.join(shared, 'case', 'output.txt'), 'w') as handle:\n"  # the env var plus a fixed name
    "    handle.write(data.upper())\n"
    "seen = {'path': shared, 'same': os.path.dirname(case) == shared}\n"
    "try:\n"
    "    seen['listing'] = os.listdir(shared)\n"
    "except OSError as exc:\n"
    "    seen['listing'] = type(exc).__name__\n"
    "try:\n"
    "    open(os.path.join(shared, 'top.txt'), 'w').close()\n"
    "    seen['create'] = 'OK'\n"
    "except OSError as exc:\n"
    "    seen['create'] = type(exc).__name__\n"
    "print(json.dumps(seen))\n"
    "s.sendall(b'done')\n"
)


def assert_shared_round_trip(backend) -> None:
    """An honest paired job hands a file through the shared directory and back; it found the
    directory empty, the judge's, SHARED_MODE, at the same path on both sides."""
    import json

    result = backend.run(pair(HONEST_CANDIDATE, HONEST_JUDGE))
    assert (result.status, result.exit_code) == ("ok", 0), result
    assert result.details["clean"] is True, result
    judge, candidate = json.loads(result.stdout), json.loads(result.details["candidate"]["stdout"])
    assert judge["output"] == "HELLO FROM THE JUDGE"
    assert judge["listing"] == [] and judge["mode"] == oct(SHARED_MODE) and judge["mine"], judge
    assert candidate["path"] == judge["path"] and candidate["same"], (candidate, judge)
    if _uids(backend):
        assert (candidate["listing"], candidate["create"]) == ("PermissionError", "PermissionError"), candidate


def _host_shared(backend) -> str | None:
    """The shared directory of a local backend's (only) runner, on the host; None for Docker."""
    if backend.kind == "docker":
        return None
    (runner,) = backend._all
    return runner.shared_dir


def assert_shared_is_empty(backend) -> None:
    judge = (
        "import json, os\n"
        f"shared = os.environ[{SHARED_ENV!r}]\n"
        "print(json.dumps([sorted(os.listdir(shared)), oct(os.stat(shared).st_mode & 0o7777)]))\n"
        + WAIT_FOR_CANDIDATE
    )
    result = backend.run(pair("pass\n", judge))
    assert (result.status, result.stdout) == ("ok", f'[[], "{oct(SHARED_MODE)}"]\n'), result
    host = _host_shared(backend)
    if host is not None:
        assert os.listdir(host) == [] and os.stat(host).st_mode & 0o7777 == SHARED_MODE


# -- the contract ---------------------------------------------------------------------------------


def test_judge_hands_a_subdirectory_to_the_candidate(backend):
    assert_shared_round_trip(backend)
    host = _host_shared(backend)
    if host is not None:  # emptied after the job, on the host too
        assert os.listdir(host) == []
    assert_shared_round_trip(backend)  # and the next job finds it empty again
    assert_next_pair_is_normal(backend)


def test_unpaired_jobs_run_as_before(backend):
    code = f"import os\nprint(os.environ.get({SHARED_ENV!r}), sorted(os.listdir('.')))\n"
    result = backend.run(Job(command=["python3", "main.py"], files={"main.py": code}))
    assert (result.status, result.stdout) == ("ok", "None ['main.py']\n"), result
    assert result.details["clean"] is True
    assert_shared_round_trip(backend)


def test_the_job_cannot_override_the_variable(backend):
    job = pair(HONEST_CANDIDATE, HONEST_JUDGE)
    job.env[SHARED_ENV] = "/elsewhere"
    job.judge.env[SHARED_ENV] = "/elsewhere"
    result = backend.run(job)
    assert result.exit_code == 0 and '"output": "HELLO FROM THE JUDGE"' in result.stdout, result
    assert "/elsewhere" not in result.stdout + result.details["candidate"]["stdout"]


def test_judge_dir_stays_out_of_the_candidates_reach(backend):
    """The shared directory opens nothing else: the judge's own directory stays closed."""
    candidate = (
        "import os, socket\n"
        "s = socket.socket(fileno=3)\n"
        "where = s.recv(4096).decode()\n"
        "try:\n"
        "    print(os.listdir(where))\n"
        "except OSError as exc:\n"
        "    print(type(exc).__name__)\n"
        "s.sendall(b'done')\n"
    )
    judge = "import os, socket\ns = socket.socket(fileno=3)\ns.sendall(os.getcwd().encode())\ns.recv(4)\ns.recv(1)\n"
    result = backend.run(pair(candidate, judge))
    assert result.exit_code == 0, result
    if _uids(backend):
        assert result.details["candidate"]["stdout"] in ("PermissionError\n", "FileNotFoundError\n"), result


# -- what the candidate leaves there ----------------------------------------------------------------

# The judge opens `case` to the candidate and tells it the paths it needs; the candidate then
# does its worst in `case` and exits; the judge waits for it.
OPENING_JUDGE = (
    "import os, socket\n"
    f"shared = os.environ[{SHARED_ENV!r}]\n"
    "case = os.path.join(shared, 'case')\n"
    "os.mkdir(case)\n"
    "os.chmod(case, 0o777)\n"
    "s = socket.socket(fileno=3)\n"
    "s.sendall(f'{case}\\n{os.getcwd()}'.encode())\n"
    "print('judge', s.recv(64).decode())\n"
)

DEEP_AND_MANY = (
    "import os, socket\n"
    "s = socket.socket(fileno=3)\n"
    "case, judge_dir = s.recv(4096).decode().split('\\n')\n"
    "os.chdir(case)\n"
    "os.mkdir('many')\n"
    "for i in range({files}):\n"
    "    open(f'many/f{{i}}', 'w').close()\n"
    "os.mkdir('deep')\n"
    "os.chdir('deep')\n"
    "for _ in range({depth}):\n"
    "    os.mkdir('d')\n"
    "    os.chdir('d')\n"
    "open('leaf', 'w').write('x')\n"
    "os.chdir(case)\n"
    "s.sendall(b'deep')\n"
)


@pytest.mark.parametrize("depth", [3000])
def test_a_deep_tree_and_a_flood_of_files_are_removed(backend, depth):
    start = time.monotonic()
    result = backend.run(pair(DEEP_AND_MANY.format(files=4000, depth=depth), OPENING_JUDGE, wall_s=60, cpu_s=60))
    assert (result.status, result.stdout) == ("ok", "judge deep\n"), result
    assert result.details["clean"] is True, result.details  # removed: the runner stays in service
    assert time.monotonic() - start < 60
    assert_shared_is_empty(backend)
    assert_shared_round_trip(backend)


HOSTILE = (
    "import os, socket, sys\n"
    "s = socket.socket(fileno=3)\n"
    "case, judge_dir = s.recv(4096).decode().split('\\n')\n"
    "canary = sys.argv[1]\n"
    "os.chdir(case)\n"
    # links pointing out: to /, to the judge's directory, to a host directory anyone may write
    "for name, target in (('root', '/'), ('judge', judge_dir), ('canary', canary),\n"
    "                     ('canary-file', canary + '/keep'), ('self', case), ('dangling', '/nonexistent')):\n"
    "    os.symlink(target, name)\n"
    # a closed directory with content, a closed one inside an open one, a sticky one
    "for path in ('closed/a/b', 'open/closed/c', 'sticky/x'):\n"
    "    os.makedirs(path)\n"
    "    open(path + '/f', 'w').close()\n"
    "    os.symlink('/', path + '/up')\n"
    "os.chmod('closed/a', 0)\n"
    "os.chmod('closed', 0)\n"
    "os.chmod('open/closed', 0)\n"
    "os.chmod('sticky', 0o1777)\n"
    "os.chmod('sticky/x', 0o1000)\n"
    "os.mkfifo('fifo')\n"
    "try:\n"
    "    os.chmod('.', 0o1777)\n"
    "except PermissionError:\n"  # the judge's directory
    "    pass\n"
    "s.sendall(b'planted')\n"
)


@pytest.fixture
def canary():
    """A host directory any uid may write, with a file in it: a link to it must not empty it."""
    base = tempfile.mkdtemp(prefix="rewardsmith-canary-", dir="/var/tmp")
    os.chmod(base, 0o777)
    Path(base, "keep").write_text("still here")
    os.chmod(Path(base, "keep"), 0o666)
    yield base
    subprocess.run(["rm", "-rf", "--", base], check=False)


def test_links_closed_and_sticky_directories_are_removed_and_nothing_outside(backend, canary):
    job = pair(HOSTILE, OPENING_JUDGE)
    job.command = ["python3", "cand.py", canary]
    result = backend.run(job)
    assert (result.status, result.stdout) == ("ok", "judge planted\n"), result
    assert result.details["candidate"]["stderr"] == "", result
    assert result.details["clean"] is True, result.details
    assert Path(canary, "keep").read_text() == "still here" and os.stat(canary).st_mode & 0o777 == 0o777
    assert oct(os.stat(Path(canary, "keep")).st_mode & 0o777) == oct(0o666)
    assert_shared_is_empty(backend)
    assert_shared_round_trip(backend)
    assert_next_pair_is_normal(backend)


def test_trees_of_both_uids_inside_each_other_are_removed(backend):
    """Judge's directories inside the candidate's inside the judge's, each closed by its owner,
    and the judge opening the top of the shared directory itself to the candidate."""
    judge = (
        "import os, socket\n"
        f"shared = os.environ[{SHARED_ENV!r}]\n"
        "os.chmod(shared, 0o1777)\n"  # its own: it may open it (sticky, even)
        "os.makedirs(shared + '/j1')\n"
        "os.chmod(shared + '/j1', 0o1777)\n"
        "s = socket.socket(fileno=3)\n"
        "s.sendall(shared.encode())\n"
        "assert s.recv(2) == b'c1'\n"  # the candidate made j1/c1 (0777) and top-level c0
        "os.makedirs(shared + '/j1/c1/j2/j3')\n"
        "open(shared + '/j1/c1/j2/j3/f', 'w').close()\n"
        "os.chmod(shared + '/j1/c1/j2', 0o700)\n"
        "s.sendall(b'j2')\n"
        "assert s.recv(2) == b'ok'\n"
        "os.chmod(shared + '/j1', 0o700)\n"
        "print('judge done')\n"
    )
    candidate = (
        "import os, socket\n"
        "s = socket.socket(fileno=3)\n"
        "shared = s.recv(4096).decode()\n"
        "os.makedirs(shared + '/j1/c1')\n"
        "os.chmod(shared + '/j1/c1', 0o777)\n"
        "os.makedirs(shared + '/c0/d/e')\n"  # at the top: the judge opened it
        "open(shared + '/c0/d/e/f', 'w').close()\n"
        "os.symlink('/', shared + '/c0/root')\n"
        "s.sendall(b'c1')\n"
        "assert s.recv(2) == b'j2'\n"
        "os.makedirs(shared + '/j1/c1/c2')\n"
        "os.chmod(shared + '/j1/c1', 0o700)\n"
        "os.chmod(shared + '/c0/d', 0)\n"
        "os.chmod(shared + '/c0', 0o1700)\n"
        "s.sendall(b'ok')\n"
    )
    result = backend.run(pair(candidate, judge))
    assert (result.status, result.stdout) == ("ok", "judge done\n"), result
    assert result.details["candidate"]["stderr"] == "", result
    assert result.details["clean"] is True, result.details
    assert_shared_is_empty(backend)
    assert_shared_round_trip(backend)


def test_a_daemon_writing_after_the_job_does_not_reach_the_next(backend):
    candidate = (
        "import os, socket, time\n"
        "s = socket.socket(fileno=3)\n"
        "case = s.recv(4096).decode().split('\\n')[0]\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        os.close(3)\n"
        "        i = 0\n"
        "        while True:\n"
        "            for path in (case, case + '/sub'):\n"
        "                try:\n"
        "                    os.makedirs(path, exist_ok=True)\n"
        "                    open(f'{path}/late{i}', 'w').close()\n"
        "                except OSError:\n"
        "                    pass\n"
        "            i += 1\n"
        "            time.sleep(0.005)\n"
        "    os._exit(0)\n"
        "time.sleep(0.2)\n"
        "s.sendall(b'daemon')\n"
    )
    result = backend.run(pair(candidate, OPENING_JUDGE))
    assert (result.status, result.stdout) == ("ok", "judge daemon\n"), result
    assert result.details["clean"] is True, result.details  # nothing of the job was left alive
    time.sleep(0.3)
    for _ in range(2):
        assert_shared_is_empty(backend)
        time.sleep(0.2)
    assert_shared_round_trip(backend)


# -- the runner's removal, on the host ---------------------------------------------------------------

CANDIDATE_UID, JUDGE_UID, STRANGER_UID = 3_999_970, 3_999_971, 3_999_972


@pytest.fixture
def host_dir():
    """A directory the job uids can reach (pytest's tmp_path is in a directory closed to them)."""
    base = tempfile.mkdtemp(prefix="rewardsmith-shared-test-", dir="/var/tmp")
    os.chmod(base, 0o755)
    yield Path(base)
    subprocess.run(["rm", "-rf", "--", base], check=False)


@pytest.fixture
def runner(host_dir):
    if os.getuid() != 0:
        pytest.skip("needs root: the removal works as the two job uids")
    paths = {name: host_dir / name for name in ("work", "judge", "shared")}
    for path in paths.values():
        path.mkdir()
    for name, uid in (("work", CANDIDATE_UID), ("judge", JUDGE_UID), ("shared", JUDGE_UID)):
        os.chown(paths[name], uid, uid)
    for name in ("work", "judge"):
        os.chmod(paths[name], 0o700)
    os.chmod(paths["shared"], SHARED_MODE)
    made = Runner(str(paths["work"]), kill_all=False, run_as=CANDIDATE_UID, judge_as=JUDGE_UID,
                  judge_dir=str(paths["judge"]), shared_dir=str(paths["shared"]))
    made.shared_path = paths["shared"]
    return made


def _make_tree(root: Path, spec: list[tuple[str, int, int, str | None]]) -> None:
    """Entries (relative path, owner, mode, link target or None for a directory, '' for a file),
    made in order as root; modes set afterwards, deepest first, so closed directories can be filled."""
    for relative, owner, _mode, target in spec:
        path = root / relative
        if target is None:
            path.mkdir()
        elif target == "":
            path.write_text("x")
        else:
            path.symlink_to(target)
        os.lchown(path, owner, owner)
    for relative, _owner, mode, target in sorted(spec, key=lambda e: -e[0].count("/")):
        if target is None or target == "":
            os.chmod(root / relative, mode)


def test_the_runner_removes_mixed_trees_without_following_links(runner, host_dir):
    outside = host_dir / "outside"
    outside.mkdir()
    (outside / "keep").write_text("kept")
    for path in (outside, outside / "keep"):
        os.chmod(path, 0o777)
    C, J = CANDIDATE_UID, JUDGE_UID
    _make_tree(runner.shared_path, [
        ("j", J, 0o1777, None),                 # the judge's, opened (sticky) to the candidate
        ("j/c", C, 0o000, None),                # the candidate's, closed
        ("j/c/f", C, 0o000, ""),
        ("j/c/j", J, 0o700, None),              # the judge's inside the candidate's closed one
        ("j/c/j/c", C, 0o000, None),            # and the candidate's inside that
        ("j/c/j/c/f", C, 0o644, ""),
        ("j/c/j/f", J, 0o000, ""),
        ("j/out", C, 0, str(outside)),          # links out, never followed
        ("j/out-file", C, 0, str(outside / "keep")),
        ("j/root", C, 0, "/"),
        ("j/work", C, 0, runner.workdir),
        ("jclosed", J, 0o000, None),
        ("jclosed/f", J, 0o600, ""),
        ("cfile", C, 0o000, ""),                # the candidate's, at the top
        ("ctop", C, 0o1000, None),
        ("ctop/d", C, 0o000, None),
        ("ctop/d/f", C, 0o644, ""),
        ("link", J, 0, str(outside)),
    ])
    os.chmod(runner.shared_path, 0o1777)  # the judge opened its top during the job
    depth_root = runner.shared_path / "j" / "deep"
    depth_root.mkdir()
    os.chown(depth_root, C, C)
    here = os.open(str(depth_root), os.O_RDONLY)
    try:
        for _ in range(2500):  # deeper than any path can name
            os.mkdir("d", dir_fd=here)
            os.chown("d", C, C, dir_fd=here, follow_symlinks=False)
            inner = os.open("d", os.O_RDONLY, dir_fd=here)
            os.close(here)
            here = inner
        os.chmod(here, 0)  # closed at the bottom
    finally:
        os.close(here)
    Path(runner.workdir, "mine").write_text("the candidate's own file")
    assert runner._shared_clean() is False
    runner._empty_shared()
    assert os.listdir(runner.shared_path) == []
    info = os.stat(runner.shared_path)
    assert (info.st_uid, info.st_mode & 0o7777) == (J, SHARED_MODE)
    assert runner._shared_clean() is True
    assert (outside / "keep").read_text() == "kept" and Path(runner.workdir, "mine").exists()
    assert os.stat(outside).st_mode & 0o7777 == 0o777 and os.stat(outside / "keep").st_mode & 0o7777 == 0o777
    assert os.stat(runner.workdir).st_mode & 0o7777 == 0o700


def test_what_cannot_be_removed_makes_the_job_not_clean(runner):
    stranger = runner.shared_path / "x"
    _make_tree(runner.shared_path, [("x", JUDGE_UID, 0o777, None), ("x/s", STRANGER_UID, 0o000, None),
                                     ("x/s/f", STRANGER_UID, 0o600, "")])
    runner._empty_shared()
    assert (stranger / "s").exists()  # neither uid may remove another uid's closed directory
    assert runner._shared_clean() is False and runner._clean() is False


def test_an_empty_shared_directory_costs_no_process(runner, monkeypatch):
    import rewardsmith.sandbox.runner as runner_module

    calls = []
    monkeypatch.setattr(runner_module, "_bounded", lambda command, deadline: calls.append(command) or True)
    os.chmod(runner.shared_path, 0o777)  # the judge changed its mode: given back, no process either
    runner._empty_shared()
    assert calls == [] and os.stat(runner.shared_path).st_mode & 0o7777 == SHARED_MODE
    assert runner._shared_clean() is True
