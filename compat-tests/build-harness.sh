#!/usr/bin/env bash
# Build the Redisson interop harness fat jar for one Redisson version.
#
#   compat-tests/build-harness.sh 3.52.0      -> compat-tests/jars/harness-3.52.0.jar
#
# Skips the build when the jar exists and is newer than pom.xml and every
# file under src/. Lock kinds that need a newer Redisson (kinds.properties) are
# compiled in only when VERSION is at least their ".since" version. Maven's local repository is ${COMPAT_M2_REPO:-$HOME/.m2/repository}
# so later runs reuse downloads. Each version builds in its own target-VERSION/.
# Prints the jar path on stdout when done.
set -euo pipefail

usage() {
    echo "usage: $0 REDISSON_VERSION   (e.g. 4.7.0, 3.52.0, 3.24.3, 3.17.7)" >&2
    exit 2
}

[ $# -eq 1 ] || usage
VERSION="$1"
case "$VERSION" in
    ''|*[!A-Za-z0-9._-]*) echo "build-harness: invalid version '$VERSION'" >&2; exit 2 ;;
esac

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
JAR_DIR="$HERE/jars"
JAR="$JAR_DIR/harness-$VERSION.jar"

# Up to date? (jar newer than pom.xml and all sources/resources)
if [ -f "$JAR" ]; then
    stale=0
    if [ "$HERE/pom.xml" -nt "$JAR" ]; then
        stale=1
    elif [ -n "$(find "$HERE/src" -type f -newer "$JAR" -print -quit)" ]; then
        stale=1
    fi
    if [ "$stale" -eq 0 ]; then
        echo "build-harness: $JAR is up to date" >&2
        echo "$JAR"
        exit 0
    fi
fi

if ! command -v java >/dev/null 2>&1; then
    echo "build-harness: 'java' not found on PATH; install a JDK 17+ (e.g. apt-get install openjdk-17-jdk-headless)" >&2
    exit 1
fi
if ! command -v mvn >/dev/null 2>&1; then
    echo "build-harness: 'mvn' not found on PATH; install Maven 3.8+ (e.g. apt-get install maven)" >&2
    exit 1
fi

JAVA_SPEC="$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p' | head -n1)"
case "$JAVA_SPEC" in
    1.*|[0-9]|1[0-6]) echo "build-harness: Java 17+ is required to build (found java.specification.version=$JAVA_SPEC)" >&2; exit 1 ;;
esac

M2_REPO="${COMPAT_M2_REPO:-$HOME/.m2/repository}"
BUILD_DIR="target-$VERSION"

# Optional lock kinds (src/main/resources/kinds.properties): compile src/main/kinds/<kind>/ only
# when this Redisson version has the kind, i.e. VERSION >= <kind>.since (sort -V order).
KINDS_FILE="$HERE/src/main/resources/kinds.properties"
prop() { sed -n "s/^$1=//p" "$KINDS_FILE" | head -n1 | tr -d '[:space:]'; }
version_ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]; }
KIND_FLAGS=()
KINDS_ON=()
for kind in $(sed -n 's/^kinds=//p' "$KINDS_FILE"); do
    since="$(prop "$kind.since")"
    [ -n "$since" ] || { echo "build-harness: $KINDS_FILE has no $kind.since" >&2; exit 1; }
    if version_ge "$VERSION" "$since"; then
        KIND_FLAGS+=("-Dharness.kind.$kind=true")
        KINDS_ON+=("$kind")
    else
        KINDS_ON+=("-$kind(<$since)")
    fi
done

# JsonJacksonCodec (the map-entry name commands) needs Jackson 2's databind: a dependency of
# Redisson 3.x, only an optional one of 4.x, whose jar then lacks it (profile jackson2 of pom.xml)
if version_ge "$VERSION" "4.0.0"; then
    KIND_FLAGS+=("-Dharness.jackson2=true")
fi
# Kryo5Codec (the default codec from 3.18.0 on) needs Kryo 5, only a provided dependency before
# 3.18.0 (profile kryo5 of pom.xml)
if ! version_ge "$VERSION" "3.18.0"; then
    KIND_FLAGS+=("-Dharness.kryo5=true")
fi

echo "build-harness: building Redisson $VERSION harness, kinds: lock readWrite fair ${KINDS_ON[*]} (maven repo: $M2_REPO)" >&2
start=$(date +%s)
if ! (cd "$HERE" && mvn -B -q \
        -Dstyle.color=never \
        -Dmaven.repo.local="$M2_REPO" \
        -Dredisson.version="$VERSION" \
        -DbuildDir="$BUILD_DIR" \
        "${KIND_FLAGS[@]}" \
        package >&2); then   # keep our stdout for the jar path only
    echo "build-harness: Maven build FAILED for Redisson $VERSION" >&2
    exit 1
fi

BUILT="$HERE/$BUILD_DIR/harness-$VERSION.jar"
if [ ! -f "$BUILT" ]; then
    echo "build-harness: expected $BUILT but Maven did not produce it" >&2
    exit 1
fi
mkdir -p "$JAR_DIR"
cp -f "$BUILT" "$JAR.tmp.$$"
mv -f "$JAR.tmp.$$" "$JAR"
echo "build-harness: built $JAR in $(( $(date +%s) - start ))s" >&2
echo "$JAR"
