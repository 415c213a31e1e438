#!/bin/bash
# Builds the jobs' Python environment inside Greene's ext3 overlay: Miniforge in /ext3/miniforge3,
# /ext3/env.sh that activates it (the greene profile's env_script sources it in every job), torch
# built for the image's CUDA 12.1, this repository installed with its jobs extra, and CIFAR-10.
# Run it once, inside the container with the overlay mounted read-write (README, "On NYU Greene"):
#
#   singularity exec --overlay overlay-25GB-500K.ext3:rw IMAGE /bin/bash hpml/docs/greene/overlay-env.sh
#
# Safe to run again: what is there already is kept; pip only adds what is missing.
set -euo pipefail

REPO=$(realpath "$(dirname "$(realpath "$0")")/../..")
# The image is cuda12.1.1: torch's cu121 wheels (PyPI's default build targets a newer CUDA).
TORCH_INDEX=https://download.pytorch.org/whl/cu121
MINIFORGE=https://github.com/conda-forge/miniforge/releases/latest/download/Miniforge3-Linux-x86_64.sh

[ -d /ext3 ] && [ -w /ext3 ] || {
  echo "no writable /ext3: run this inside singularity exec --overlay FILE.ext3:rw IMAGE" >&2; exit 1; }

if [ ! -x /ext3/miniforge3/bin/python ]; then
  echo "== Miniforge into /ext3/miniforge3"
  wget -q -O /tmp/miniforge-$$.sh "$MINIFORGE" || curl -fsSL -o /tmp/miniforge-$$.sh "$MINIFORGE"
  bash /tmp/miniforge-$$.sh -b -p /ext3/miniforge3
  rm -f /tmp/miniforge-$$.sh
fi

cat > /ext3/env.sh <<'ENV'
#!/bin/bash
# Written by docs/greene/overlay-env.sh: the overlay's Python first on the PATH.
export PATH=/ext3/miniforge3/bin:$PATH
ENV
# shellcheck disable=SC1091
source /ext3/env.sh

echo "== torch and torchvision for CUDA 12.1"
python -m pip install -q torch torchvision --index-url "$TORCH_INDEX"
echo "== $REPO with its jobs extra"
python -m pip install -q -e "$REPO[jobs]"

cd "$REPO"
[ -d data/cifar-10-batches-py ] || { echo "== CIFAR-10 into $REPO/data"; python -m jobs.data --download data; }
python -c 'import torch, torchvision; print("overlay ready: torch", torch.__version__, "CUDA", torch.version.cuda,
      "torchvision", torchvision.__version__)'
