#!/usr/bin/env bash
# Install, configure and start podman's Docker-API service for the docker backend (idempotent).
#
#   eval "$(bash .ci/podman.sh)"     # -> export DOCKER_HOST=unix:///run/podman/podman.sock
#
# stdout carries only the export line (so it can be eval'd); what the script did goes to stderr.
# Settings (docs/sandboxes.md, facts about our machines): runc (crun refuses hybrid cgroups),
# cgroupfs (no systemd), file events, and low default ulimits (else runc fails with
# "setrlimit ... Operation not permitted").
# Override the socket with PODMAN_SOCKET=/path.sock. Exits non-zero, saying why, when the service
# cannot be started.
set -euo pipefail

SOCK="${PODMAN_SOCKET:-/run/podman/podman.sock}"
CONF=/etc/containers/containers.conf
MARK="# Written by autoenvscaling"
LOG=/var/log/autoenvscaling-podman.log
say() { echo "[podman] $*" >&2; }
SUDO=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else say "not root and no sudo: cannot install or configure podman"; fi
fi

ping_socket() { curl -fsS --max-time 2 --unix-socket "$SOCK" http://d/_ping 2>/dev/null | grep -q OK; }

# 1. packages
missing=()
for pkg in podman runc curl; do
  command -v "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]} (apt-get)"
  $SUDO apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq podman runc curl >&2
else
  say "podman, runc and curl are installed ($(podman --version))"
fi

# 2. configuration: ours is written (or refreshed); someone else's file is left alone, since the
# service below gets the essential settings as flags anyway.
read -r -d '' WANT <<EOF || true
$MARK (.ci/podman.sh): settings podman needs on hosts with hybrid cgroups and no systemd.
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
if [ -f "$CONF" ] && ! grep -q "^$MARK" "$CONF"; then
  say "$CONF exists and is not ours: left unchanged (the service gets runc/cgroupfs/file events as flags)"
elif [ -f "$CONF" ] && [ "$(cat "$CONF")" = "$WANT" ]; then
  say "$CONF already configured"
else
  $SUDO mkdir -p "$(dirname "$CONF")"
  printf '%s\n' "$WANT" | $SUDO tee "$CONF" >/dev/null
  say "wrote $CONF (runc, cgroupfs, file events, default ulimits)"
fi

# 3. the service
if ping_socket; then
  say "a Docker-API service already answers on $SOCK"
else
  $SUDO mkdir -p "$(dirname "$SOCK")"
  $SUDO rm -f "$SOCK"  # a stale socket of a service that died
  say "starting podman system service on unix://$SOCK (log: $LOG)"
  # setsid + nohup: the service outlives this script and the shell that called it. cd /: conmon
  # fails ("Failed to get working directory") once the caller's folder is deleted, e.g. a CI clone.
  cd /
  $SUDO setsid nohup podman --runtime runc --cgroup-manager=cgroupfs --events-backend=file \
    system service --time=0 "unix://$SOCK" >"$LOG" 2>&1 < /dev/null &
  for _ in $(seq 1 150); do
    ping_socket && break
    sleep 0.2
  done
  if ! ping_socket; then
    say "the service did not answer within 30 s; last log lines:"
    tail -n 5 "$LOG" >&2 || true
    exit 1
  fi
  say "service is up"
fi
say "use it with: export DOCKER_HOST=unix://$SOCK"
echo "export DOCKER_HOST=unix://$SOCK"
