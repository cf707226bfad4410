#!/usr/bin/env bash
# Runs the README's commands as a new user would, in a clean Debian bookworm root: debootstrap (minbase), then what
# a developer's machine has before it meets Berth (Node 20 and npm 11 copied from this machine, build-essential,
# python3 for node-gyp, ca-certificates), a copy of what a clone holds (`git archive HEAD`) with ../shared beside
# it, and in a chroot as root: `npm install && npm test` (or the command given as arguments). Everything else the
# suite needs, npm test's preflight must install; the last line is the suite's own summary.
#
#   sudo scripts/fresh-root.sh                      # npm install && npm test
#   sudo scripts/fresh-root.sh 'npm install && npm start'
#
# Needs root, debootstrap and a Debian mirror. PostgreSQL and Redis are this machine's (a chroot shares the
# network). Env: BERTH_FRESH_ROOT (default /var/tmp/berth-fresh-root, removed first), MIRROR (default: this
# machine's first Debian URI), BERTH_FRESH_KEEP=1 keeps the root afterwards, BERTH_FRESH_BASE_TAR (the cached minbase). Log: $BERTH_FRESH_ROOT.log.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
ROOT=${BERTH_FRESH_ROOT:-/var/tmp/berth-fresh-root}
CMD=${1:-npm install && npm test}
[ "$(id -u)" = 0 ] || { echo "fresh-root.sh: needs root (debootstrap, chroot, mounts)" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "fresh-root.sh: needs debootstrap (apt-get install debootstrap)" >&2; exit 2; }
if [ -z "${MIRROR:-}" ]; then
  MIRROR=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  [ -n "$MIRROR" ] || MIRROR=$(awk '$1=="deb" {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
  [ -n "$MIRROR" ] || MIRROR=http://deb.debian.org/debian
fi
say() { printf '[fresh-root %s] %s\n' "$(date +%T)" "$*"; }

mounts=()
cleanup() {
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[$i]}" 2>/dev/null || true; done
  # Daemons the suite may have left in the root (dockerd is stopped by the tests themselves).
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/root" 2>/dev/null)" = "$ROOT" ] && kill -9 "${p#/proc/}" 2>/dev/null || true
  done
  [ "${BERTH_FRESH_KEEP:-0}" = 1 ] || rm -rf --one-file-system "$ROOT"
}
trap cleanup EXIT
# Recursive bind mounts, made slaves so that unmounting them never propagates back to this machine's own mounts.
bind() { mkdir -p "$ROOT$2"; mount --rbind "$1" "$ROOT$2"; mount --make-rslave "$ROOT$2"; mounts+=("$ROOT$2"); }

t0=$(date +%s)
rm -rf --one-file-system "$ROOT"
# debootstrap's output is kept as a tarball (untouched minbase, nothing of ours in it) so a second run skips it.
BASE_TAR=${BERTH_FRESH_BASE_TAR:-/var/tmp/berth-debootstrap-bookworm-minbase.tar}
if [ -f "$BASE_TAR" ]; then
  say "minbase from $BASE_TAR (delete it for a new debootstrap)"
  mkdir -p "$ROOT" && tar -xf "$BASE_TAR" -C "$ROOT"
else
  say "debootstrap --variant=minbase bookworm $ROOT $MIRROR"
  debootstrap --variant=minbase bookworm "$ROOT" "$MIRROR" >"$ROOT.debootstrap.log" 2>&1 ||
    { tail -20 "$ROOT.debootstrap.log"; exit 1; }
  tar --numeric-owner -cf "$BASE_TAR.part" -C "$ROOT" . && mv "$BASE_TAR.part" "$BASE_TAR"
fi
printf 'deb %s bookworm main\ndeb %s bookworm-updates main\n' "$MIRROR" "$MIRROR" >"$ROOT/etc/apt/sources.list"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"

# What a developer's machine has: Node 20 + npm 11 (this machine's), build tools, python3, CA certificates.
NODE_BIN=$(readlink -f "$(command -v node)")
NODE_PREFIX=$(dirname "$(dirname "$NODE_BIN")")
install -D -m 0755 "$NODE_BIN" "$ROOT/usr/local/bin/node"
mkdir -p "$ROOT/usr/local/lib/node_modules" "$ROOT/usr/local/include"
cp -a "$NODE_PREFIX/lib/node_modules/npm" "$ROOT/usr/local/lib/node_modules/npm"
[ -d "$NODE_PREFIX/include/node" ] && cp -a "$NODE_PREFIX/include/node" "$ROOT/usr/local/include/"
ln -sfn ../lib/node_modules/npm/bin/npm-cli.js "$ROOT/usr/local/bin/npm"
ln -sfn ../lib/node_modules/npm/bin/npx-cli.js "$ROOT/usr/local/bin/npx"

# The root a mount point of its own: dockerd in the chroot (the image tests) remounts / when it imports an image,
# which fails on a plain folder ("remount /, flags: 0x84000: invalid argument").
mount --bind "$ROOT" "$ROOT" && mount --make-private "$ROOT" && mounts+=("$ROOT")
bind /proc /proc
bind /sys /sys
bind /dev /dev
mkdir -p "$ROOT/tmp" && chmod 1777 "$ROOT/tmp"
# TLS to the registries is re-signed on the machines this was written on: trust the host's bundle too.
cp /etc/ssl/certs/ca-certificates.crt "$ROOT/host-ca.crt"
ENV=(env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8
  NODE_EXTRA_CA_CERTS=/host-ca.crt npm_config_nodedir=/usr/local DEBIAN_FRONTEND=noninteractive)
say "apt-get install build-essential python3 ca-certificates (a developer's machine)"
chroot "$ROOT" "${ENV[@]}" bash -c 'apt-get update -qq && apt-get install -y -qq --no-install-recommends build-essential python3 ca-certificates git >/dev/null'

mkdir -p "$ROOT/w/berth"
git -C "$REPO" archive HEAD | tar -x -C "$ROOT/w/berth"
cp -r "$REPO/../shared" "$ROOT/w/shared"
say "node $(chroot "$ROOT" /usr/local/bin/node --version), npm $(chroot "$ROOT" "${ENV[@]}" npm --version), $(git -C "$REPO" rev-parse --short HEAD); running: $CMD"
set +e
chroot "$ROOT" "${ENV[@]}" bash -c "cd /w/berth && $CMD"
rc=$?
set -e
say "exit code $rc after $(($(date +%s) - t0)) s"
exit "$rc"
