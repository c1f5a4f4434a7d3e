#!/usr/bin/env bash
# Build the rewardsmith sandbox image WITHOUT an image registry: debootstrap a Debian bookworm
# rootfs from the apt mirror and `docker import` it. Same content as ./Dockerfile (python3,
# python3-pytest, g++, the third-party scorers of scorers.txt in /opt/rewardsmith/scorers, user
# sandbox uid/gid 10001, WORKDIR /work), for machines that reach a Debian mirror and PyPI but no
# registry.
#
# Usage: build_offline.sh [IMAGE] [--force]
#   IMAGE   defaults to $REWARDSMITH_SANDBOX_IMAGE, else rewardsmith-sandbox:latest
#   --force rebuild even if IMAGE already exists (otherwise this is a no-op)
# Needs root (debootstrap, chroot) and a running Docker engine.
set -euo pipefail

force=0
image=""
for arg in "$@"; do
    case "$arg" in
        --force) force=1 ;;
        -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
        -*) echo "build_offline.sh: unknown option $arg" >&2; exit 2 ;;
        *) image="$arg" ;;
    esac
done
image="${image:-${REWARDSMITH_SANDBOX_IMAGE:-rewardsmith-sandbox:latest}}"
suite=bookworm
uid=10001
# What the image holds, as a number: ensure_docker.sh rebuilds an image labelled older than this, and
# rewardsmith.sandbox.backend.IMAGE_VERSION must equal it (2: the third-party scorers).
image_version=2
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

log() { echo "[build_offline] $*"; }
die() { echo "[build_offline] ERROR: $*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

[ "$(id -u)" = 0 ] || die "must run as root (debootstrap and chroot need it)"
docker info >/dev/null 2>&1 || die "no Docker engine answers; run sandbox/image/ensure_docker.sh first"

# Idempotent: an existing image of this version is left alone unless --force.
have="$(docker image inspect --format '{{ index .Config.Labels "rewardsmith.sandbox.version" }}' "$image" 2>/dev/null || true)"
if [ "$force" = 0 ] && [ "$have" = "$image_version" ]; then
    log "image $image (version $image_version) already exists; nothing to do (use --force to rebuild)"
    exit 0
fi
# The scorers' wheels are installed by this machine's pip for bookworm's Python 3.11: versions must match.
[ "$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" = 3.11 ] ||
    die "needs a python3 3.11 with pip on this machine (the image's Python) to install the scorers of scorers.txt"

# Mirror: the first URIs: line of the deb822 sources, else the first `deb` line of sources.list.
mirror=""
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    mirror="$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources)"
fi
if [ -z "$mirror" ] && [ -f /etc/apt/sources.list ]; then
    mirror="$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' /etc/apt/sources.list)"
fi
mirror="${mirror:-http://deb.debian.org/debian}"

# debootstrap fetches with wget, which ignores apt's proxy setting: pass it on if one is set.
if [ -z "${http_proxy:-}" ]; then
    apt_proxy="$(apt-config dump Acquire::http::Proxy 2>/dev/null | sed -n 's/^Acquire::http::Proxy "\(.*\)";$/\1/p' | head -n1)"
    if [ -n "$apt_proxy" ]; then export http_proxy="$apt_proxy"; fi
fi

if ! command -v debootstrap >/dev/null 2>&1; then
    log "installing debootstrap (apt-get)"
    # A missing package list makes install fail on a fresh machine; update first.
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap; } \
        >/var/log/rewardsmith-apt.log 2>&1 ||
        { tail -n 20 /var/log/rewardsmith-apt.log >&2; die "apt-get install debootstrap failed"; }
fi

# On disk (not /tmp, which may be a small tmpfs); removed on every exit path.
rootfs="$(mktemp -d /var/tmp/rewardsmith-rootfs.XXXXXX)"
debootstrap_log="$rootfs.log"
cleanup() {
    rm -f "$debootstrap_log"
    # A failed debootstrap can leave /proc, /sys or /dev mounted inside the rootfs:
    # unmount them (deepest first) before deleting, and never cross a file-system boundary.
    if [ -d "$rootfs" ]; then
        awk -v r="$rootfs" 'index($2, r "/") == 1 { print $2 }' /proc/mounts | sort -r |
            while read -r m; do umount -l "$m" 2>/dev/null || true; done
        rm -rf --one-file-system "$rootfs"
    fi
}
trap cleanup EXIT
# Turn signals into a normal exit so the EXIT trap (cleanup) runs on Ctrl-C and timeouts too.
trap 'exit 130' INT TERM HUP

t0="$(now)"
log "debootstrap $suite from $mirror into $rootfs (python3, python3-pytest, g++)"
t="$(now)"
if ! debootstrap --variant=minbase --include=python3,python3-pytest,g++ \
        "$suite" "$rootfs" "$mirror" >"$debootstrap_log" 2>&1; then
    tail -n 30 "$debootstrap_log" >&2
    [ -f "$rootfs/debootstrap/debootstrap.log" ] && tail -n 30 "$rootfs/debootstrap/debootstrap.log" >&2
    die "debootstrap failed (mirror $mirror); see the log lines above"
fi
log "debootstrap done in $(since "$t") s"

t="$(now)"
# Non-root user with fixed ids: the backend runs --user 10001:10001 and mounts its tmpfs
# work dir with uid=10001,gid=10001, so these numbers must match the Dockerfile.
chroot "$rootfs" groupadd --gid "$uid" sandbox
chroot "$rootfs" useradd --uid "$uid" --gid "$uid" --home-dir /home/sandbox --create-home \
    --shell /bin/sh sandbox
mkdir -p "$rootfs/work"
chown "$uid:$uid" "$rootfs/work"
t2="$(now)"
bash "$here/install_scorers.sh" "$rootfs/opt/rewardsmith/scorers" python3 ||
    die "installing the scorers of scorers.txt failed (is PyPI reachable?)"
log "scorers installed in $(since "$t2") s"

# Keep it small: no package caches, lists, docs, man pages or translations are needed to run code.
rm -rf "${rootfs:?}"/var/cache/apt/* "${rootfs:?}"/var/lib/apt/lists/* \
       "${rootfs:?}"/usr/share/doc/* "${rootfs:?}"/usr/share/man/* "${rootfs:?}"/usr/share/info/* \
       "${rootfs:?}"/usr/share/locale/* "${rootfs:?}"/var/log/* "${rootfs:?}"/tmp/* "${rootfs:?}"/var/tmp/*
# Docker mounts its own /dev, resolv.conf and hostname at run time; the host's copies go.
rm -rf "${rootfs:?}"/dev/*
: >"$rootfs/etc/resolv.conf"
: >"$rootfs/etc/hostname"
# The .pyc files compiled at install time stay: on a read-only root Python cannot write them,
# and without them every run would recompile the stdlib/pytest it imports (slower start).
log "user + cleanup done in $(since "$t") s ($(du -sh --one-file-system "$rootfs" | cut -f1) on disk)"

t="$(now)"
log "docker import -> $image"
tar --numeric-owner -C "$rootfs" -c . |
    docker import \
        --change 'USER sandbox' \
        --change 'WORKDIR /work' \
        --change 'ENV PYTHONDONTWRITEBYTECODE=1 PATH=/usr/local/bin:/usr/bin:/bin' \
        --change 'CMD ["bash"]' \
        --change "LABEL rewardsmith.sandbox.version=$image_version" \
        --message "rewardsmith sandbox v$image_version: debootstrap $suite minbase + python3 python3-pytest g++ + scorers" \
        - "$image" >/dev/null
log "import done in $(since "$t") s"

size="$(docker image inspect --format '{{.Size}}' "$image")"
log "built $image ($((size / 1024 / 1024)) MiB) in $(since "$t0") s total"
