#!/usr/bin/env bash
# Make a Docker engine answer and the sandbox image exist, on a machine without an image
# registry (Debian/Ubuntu, as root). Idempotent: when all is ready it returns in a fraction of a
# second. Steps, each only if needed:
#   1. apt-get install docker.io          (when no dockerd is installed)
#   2. start dockerd in the background    (overlay2 first, vfs fallback; log below)
#   3. build the image offline            (build_offline.sh: debootstrap + docker import)
# Env: REWARDSMITH_SANDBOX_IMAGE (default rewardsmith-sandbox:latest),
#      REWARDSMITH_DOCKERD_LOG  (default /var/log/rewardsmith-dockerd.log).
# Exit status non-zero, with the reason and what to do, when the engine cannot be made to work.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
image="${REWARDSMITH_SANDBOX_IMAGE:-rewardsmith-sandbox:latest}"
dlog="${REWARDSMITH_DOCKERD_LOG:-/var/log/rewardsmith-dockerd.log}"
state_dir=/var/lib/rewardsmith
flags_file="$state_dir/dockerd.flags"   # the dockerd flags that last worked here
lock_file=/run/rewardsmith-ensure-docker.lock
start_wait_s=60

log() { echo "[ensure_docker] $*"; }
fail() {
    echo "[ensure_docker] FAILED: $1" >&2
    if [ -s "$dlog" ]; then
        echo "[ensure_docker] last lines of $dlog:" >&2
        tail -n 25 "$dlog" | sed 's/^/    /' >&2
    fi
    echo "[ensure_docker] what to do: ${2:-read $dlog; start dockerd by hand (dockerd --storage-driver=vfs) and rerun this script}" >&2
    exit 1
}
# A wedged daemon can make any docker call hang: every probe gets a deadline.
engine_up() { timeout 10 docker info >/dev/null 2>&1; }
# The image exists and holds what this checkout's build makes (its version label, see build_offline.sh).
image_version="$(sed -n 's/^image_version=//p' "$here/build_offline.sh")"
image_ok() {
    [ "$(timeout 10 docker image inspect --format '{{ index .Config.Labels "rewardsmith.sandbox.version" }}' \
        "$image" 2>/dev/null)" = "$image_version" ]
}

# Fast path, no lock: everything is already there.
if command -v docker >/dev/null 2>&1 && engine_up && image_ok; then
    log "ready: engine answers and $image exists"
    exit 0
fi

[ "$(id -u)" = 0 ] || fail "not root: installing and starting dockerd needs root" \
    "rerun as root (sudo bash $0), or start a Docker engine yourself and build the image with $here/build_offline.sh"

# Concurrent callers (parallel test runs) wait for the first one instead of racing apt/dockerd.
exec 9>"$lock_file"
flock -w 1800 9 || fail "another ensure_docker.sh held $lock_file for 30 minutes" "check for a stuck apt-get/debootstrap process"

# --- 1. install the engine --------------------------------------------------------------------
if ! command -v dockerd >/dev/null 2>&1; then
    log "no dockerd: installing docker.io with apt-get"
    # Keep the package's init script from starting dockerd with its own flags and log:
    # this script starts it below. Only add a policy-rc.d when the machine has none.
    made_policy=0
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
        chmod +x /usr/sbin/policy-rc.d
        made_policy=1
    fi
    t=$SECONDS
    rc=0
    { timeout 300 apt-get update -qq && DEBIAN_FRONTEND=noninteractive timeout 900 \
        apt-get install -y -qq --no-install-recommends docker.io; } >/var/log/rewardsmith-apt.log 2>&1 || rc=$?
    [ "$made_policy" = 1 ] && rm -f /usr/sbin/policy-rc.d
    if [ "$rc" != 0 ]; then
        tail -n 20 /var/log/rewardsmith-apt.log >&2
        fail "apt-get install docker.io failed (exit $rc)" "check that the Debian mirror is reachable (apt-get update), then rerun"
    fi
    log "docker.io installed in $((SECONDS - t)) s ($(dockerd --version 2>/dev/null))"
fi
if ! command -v docker >/dev/null 2>&1; then
    fail "dockerd exists but no docker client is on PATH" "apt-get install docker.io (it ships /usr/bin/docker)"
fi

# --- 2. start the engine ----------------------------------------------------------------------
wait_engine() {  # wait_engine PID SECONDS: 0 when the engine answers, 1 when PID died or time ran out
    local pid=$1 deadline=$((SECONDS + $2))
    while [ $SECONDS -lt $deadline ]; do
        engine_up && return 0
        [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null && return 1
        sleep 0.5
    done
    return 1
}

# A throwaway image made of the host's /bin/true and its libraries: proves that the storage
# driver can mount layers and runc can start a container, without needing any registry.
probe_run() {
    local d rc=0
    d="$(mktemp -d)"
    mkdir -p "$d/bin"
    cp /bin/true "$d/bin/true"
    # ldd prints "lib => /path (addr)" or "/lib64/ld-linux... (addr)": copy each path found.
    ldd /bin/true | grep -o '/[^ ]*' | while read -r lib; do
        mkdir -p "$d$(dirname "$lib")"
        cp -L "$lib" "$d$lib"
    done
    tar -C "$d" -c . | timeout 60 docker import - rewardsmith-probe:latest >/dev/null 2>&1 || rc=$?
    rm -rf "$d"
    if [ "$rc" = 0 ]; then
        timeout 60 docker run --rm --network none rewardsmith-probe:latest /bin/true >>"$dlog" 2>&1 || rc=$?
    fi
    timeout 30 docker rmi -f rewardsmith-probe:latest >/dev/null 2>&1 || true
    return "$rc"
}

start_dockerd() {  # start_dockerd FLAGS...: 0 when it answers and can run a container
    log "starting dockerd ${*:-(default flags)} (log: $dlog)"
    echo "=== $(date -Is) ensure_docker.sh: dockerd $*" >>"$dlog"
    # Own session (setsid): a Ctrl-C or job-control kill aimed at the caller leaves the engine up.
    # fd 9 (the lock) closed for the daemon: it would hold the lock for its whole life.
    setsid nohup dockerd "$@" >>"$dlog" 2>&1 </dev/null 9>&- &
    dockerd_pid=$!
    disown "$dockerd_pid" 2>/dev/null || true
    local t=$SECONDS
    if ! wait_engine "$dockerd_pid" "$start_wait_s"; then
        if kill -0 "$dockerd_pid" 2>/dev/null; then
            log "dockerd ${*:-(default flags)} did not answer within ${start_wait_s} s"
        else
            log "dockerd ${*:-(default flags)} exited"
        fi
        stop_our_dockerd
        return 1
    fi
    log "engine answers after $((SECONDS - t)) s; probing a container run"
    if ! probe_run; then
        log "dockerd ${*:-(default flags)} starts but cannot run a container"
        stop_our_dockerd
        return 1
    fi
    return 0
}

stop_our_dockerd() {  # only the daemon this script started, by its pid
    [ -n "${dockerd_pid:-}" ] || return 0
    kill "$dockerd_pid" 2>/dev/null || true
    for _ in $(seq 1 40); do kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$dockerd_pid" 2>/dev/null || true
    dockerd_pid=""
    # Leave no stale pid file blocking the next start attempt.
    rm -f /var/run/docker.pid
}

# dockerd processes that are alive (a killed daemon whose parent never reaped it is a zombie
# that pgrep still lists; waiting for it to answer would only time out).
live_dockerd() {
    local pid
    for pid in $(pgrep -x dockerd 2>/dev/null); do
        [ "$(ps -o stat= -p "$pid" 2>/dev/null | cut -c1)" = "Z" ] || echo "$pid"
    done
}

if ! engine_up; then
    if [ -n "$(live_dockerd)" ]; then
        # Someone else's daemon is (re)starting: wait for it rather than start a second one.
        log "a dockerd is already running but not answering yet; waiting up to ${start_wait_s} s"
        wait_engine "" "$start_wait_s" ||
            fail "the running dockerd (pid $(live_dockerd | tr '\n' ' ')) does not answer: $(timeout 10 docker info 2>&1 | tail -n 2 | tr '\n' ' ')" \
                "if the client is the problem (API version), put /usr/bin/docker first on PATH; else stop that dockerd (kill its pid) and rerun this script"
    else
        # A daemon killed without cleaning up (the machine's processes ended, kill -9) leaves pid
        # files behind; a new dockerd then waits on a containerd that no longer runs and times out.
        for pidfile in /var/run/docker.pid /var/run/docker/containerd/containerd.pid; do
            if [ -f "$pidfile" ]; then
                old="$(cat "$pidfile" 2>/dev/null || true)"
                if [ -z "$old" ] || ! kill -0 "$old" 2>/dev/null \
                        || [ "$(ps -o stat= -p "$old" 2>/dev/null | cut -c1)" = "Z" ]; then
                    log "removing stale $pidfile (pid ${old:-?} is gone)"
                    rm -f "$pidfile"
                fi
            fi
        done
        # Try the flags that last worked here first, then the default driver (overlay2),
        # then vfs (slower and bigger, but works on any file system, e.g. nested overlay).
        candidates=()
        [ -s "$flags_file" ] && candidates+=("$(cat "$flags_file")")
        candidates+=("" "--storage-driver=vfs")
        # Networking is not needed (the sandbox runs --network none): if the kernel lacks
        # iptables/bridge support, run without them rather than fail.
        candidates+=("--iptables=false --ip-masq=false --bridge=none"
                     "--storage-driver=vfs --iptables=false --ip-masq=false --bridge=none")
        started=0
        tried=()
        for flags in "${candidates[@]}"; do
            # Skip a repeat of the saved flags.
            dup=0
            for f in "${tried[@]+"${tried[@]}"}"; do [ "$f" = "$flags" ] && dup=1; done
            [ "$dup" = 1 ] && continue
            tried+=("$flags")
            # shellcheck disable=SC2086  # flags are deliberately word-split
            if start_dockerd $flags; then started=1; break; fi
        done
        [ "$started" = 1 ] || fail "dockerd would not start or run a container with any of these flags: $(printf '[%s] ' "${tried[@]}")" \
            "read $dlog; common causes: no overlay/vfs space in /var/lib/docker, missing cgroup mounts, iptables modules"
        mkdir -p "$state_dir"
        echo "$flags" >"$flags_file"
        driver="$(timeout 10 docker info --format '{{.Driver}}' 2>/dev/null || echo '?')"
        log "dockerd running (pid $dockerd_pid, storage driver $driver, flags: ${flags:-none})"
    fi
fi

# The client first on PATH (e.g. a newer /usr/local/bin/docker next to Debian's /usr/bin/docker)
# must speak to this engine: API version negotiation normally makes them agree.
if ! server="$(timeout 10 docker version --format '{{.Server.Version}}' 2>&1)"; then
    fail "the docker client at $(command -v docker) cannot talk to the engine: $server" \
        "put the engine's own client first on PATH (/usr/bin/docker), or set DOCKER_API_VERSION to the engine's API version"
fi
log "client $(command -v docker) ($(docker version --format '{{.Client.Version}}' 2>/dev/null)) <-> engine $server"

# --- 3. the sandbox image ---------------------------------------------------------------------
if image_ok; then
    log "image $image present"
else
    log "image $image missing or older than version $image_version: building it offline (a few minutes)"
    timeout 1800 bash "$here/build_offline.sh" "$image" ||
        fail "building $image failed" "rerun bash $here/build_offline.sh --force and read its output"
fi
log "ready: engine answers and $image exists"
