# Shared set-up helpers for scripts/test, scripts/demo and scripts/bench (sourced, not run).
# Each installs what is missing with the OS package manager when it can, or says exactly how.

_as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else return 1
  fi
}

_apt_install() {
  command -v apt-get >/dev/null 2>&1 || return 1
  if [ -z "${_APT_UPDATED:-}" ]; then
    _as_root apt-get update -qq >/dev/null 2>&1 || true
    _APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive _as_root apt-get install -y -qq "$@" >/dev/null
}

# redis-server (and redis-cli): the tests start their own throwaway servers on loopback ports.
ensure_redis() {
  if command -v redis-server >/dev/null 2>&1; then return 0; fi
  echo "redis-server not found: installing the Debian package 'redis-server'..." >&2
  if _apt_install redis-server; then
    # the package may start a system service on 6379; we never use it, so stop it quietly
    _as_root service redis-server stop >/dev/null 2>&1 || true
    command -v redis-server >/dev/null 2>&1 && return 0
  fi
  cat >&2 <<'MSG'
redis-server is required and could not be installed automatically. Install it, then retry:
  Debian/Ubuntu: sudo apt-get install -y redis-server
  Fedora/RHEL:   sudo dnf install -y redis
  macOS:         brew install redis
or point REDIS_SERVER at a redis-server binary (Redis 6 or newer).
MSG
  return 1
}

# A JDK (17+) and Maven, for compat-tests (real Redisson from Maven Central).
ensure_java_maven() {
  if command -v java >/dev/null 2>&1 && command -v mvn >/dev/null 2>&1; then return 0; fi
  echo "java/mvn not found: installing Debian's default-jdk-headless and maven..." >&2
  _apt_install default-jdk-headless maven || true
  if command -v java >/dev/null 2>&1 && command -v mvn >/dev/null 2>&1; then return 0; fi
  cat >&2 <<'MSG'
compat-tests need a JDK (17 or newer) and Maven. Install them, then retry:
  Debian/Ubuntu: sudo apt-get install -y default-jdk-headless maven
  macOS:         brew install openjdk maven
MSG
  return 1
}

ensure_cargo() {
  if command -v cargo >/dev/null 2>&1; then return 0; fi
  [ -x "$HOME/.cargo/bin/cargo" ] && export PATH="$HOME/.cargo/bin:$PATH" && return 0
  echo "cargo not found: install Rust from https://rustup.rs (then re-run)." >&2
  return 1
}

# toxiproxy (Shopify's TCP fault proxy) for the network-fault tests: built from the Go module
# proxy into target/tools/toxiproxy-server. `ensure_toxiproxy_start` begins the build in the
# background (it downloads while cargo compiles); `ensure_toxiproxy_wait` waits for it and
# exports TOXIPROXY_SERVER. Without Go it says how to get one.
TOXIPROXY_VERSION=v2.12.0
_toxiproxy_bin() { echo "$PWD/target/tools/toxiproxy-server"; }

ensure_toxiproxy_start() {
  local bin; bin="$(_toxiproxy_bin)"
  if [ -n "${TOXIPROXY_SERVER:-}" ] || [ -x "$bin" ]; then return 0; fi
  if ! command -v go >/dev/null 2>&1; then
    _TOXIPROXY_ERR="no Go toolchain to build toxiproxy: install Go (https://go.dev/dl/; Debian: sudo apt-get install -y golang-go), or point TOXIPROXY_SERVER at a toxiproxy-server $TOXIPROXY_VERSION binary"
    return 0
  fi
  mkdir -p target/tools
  echo "== toxiproxy $TOXIPROXY_VERSION: building in the background (go install)"
  ( GOBIN="$PWD/target/tools/.go-bin" GOFLAGS=-modcacherw \
      go install "github.com/Shopify/toxiproxy/v2/cmd/server@$TOXIPROXY_VERSION" \
      && mv "$PWD/target/tools/.go-bin/server" "$bin" ) > target/tools/toxiproxy-build.log 2>&1 &
  _TOXIPROXY_PID=$!
}

ensure_toxiproxy_wait() {
  local bin; bin="$(_toxiproxy_bin)"
  if [ -n "${_TOXIPROXY_PID:-}" ]; then
    wait "$_TOXIPROXY_PID" || { cat target/tools/toxiproxy-build.log >&2; _TOXIPROXY_ERR="go install of toxiproxy failed (log above)"; }
    _TOXIPROXY_PID=
  fi
  if [ -z "${TOXIPROXY_SERVER:-}" ] && [ -x "$bin" ]; then export TOXIPROXY_SERVER="$bin"; fi
  if [ -n "${TOXIPROXY_SERVER:-}" ]; then echo "TOXIPROXY_SERVER=$TOXIPROXY_SERVER"; return 0; fi
  echo "${_TOXIPROXY_ERR:-toxiproxy unavailable}" >&2
  return 1
}
