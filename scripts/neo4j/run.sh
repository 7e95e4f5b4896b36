#!/usr/bin/env bash
# Starts a throwaway Neo4j 5.26 LTS Community on 127.0.0.1 without Docker:
# the jars come from Maven Central (scripts/neo4j/pom.xml) and are cached in
# $CAPSTAN_CACHE (default ~/.cache/capstan); Launcher.java starts the server
# through Neo4j's embedded API with Bolt on loopback, HTTP off, no auth.
#
#   scripts/neo4j/run.sh PORT DATA_DIR     run in the foreground until killed
#   scripts/neo4j/run.sh --fetch           only fetch the jars (once), saying so
#
# It prints "neo4j ready bolt://127.0.0.1:PORT" once Bolt accepts connections.
# Needs Java 17 and Maven.
set -euo pipefail
fetch_only=
if [ "${1:-}" = --fetch ]; then
  fetch_only=1
else
  port=${1:?usage: run.sh PORT DATA_DIR | run.sh --fetch}
  data=${2:?usage: run.sh PORT DATA_DIR | run.sh --fetch}
fi
here=$(cd "$(dirname "$0")" && pwd)
version=$(sed -n 's:.*<neo4j.version>\(.*\)</neo4j.version>.*:\1:p' "$here/pom.xml")
cache=${CAPSTAN_CACHE:-$HOME/.cache/capstan}/neo4j-$version
command -v java >/dev/null || { echo "run.sh: java not found: install Java 17 (or run with Docker, or set NEO4J_URI)" >&2; exit 3; }
command -v mvn >/dev/null || { echo "run.sh: mvn not found: install Maven (or run with Docker, or set NEO4J_URI)" >&2; exit 3; }
if [ ! -f "$cache/ready" ]; then
  mkdir -p "$cache"
  lock="$cache.lock"
  # One fetch at a time when several test packages start servers at once.
  exec 9>"$lock"
  flock 9
  if [ ! -f "$cache/ready" ]; then
    echo "run.sh: Neo4j $version is not cached yet: fetching it once from Maven Central (about 150 MB) into $cache" >&2
    mvn -q -B -f "$here/pom.xml" dependency:copy-dependencies -DoutputDirectory="$cache/lib" >&2
    touch "$cache/ready"
  fi
  flock -u 9
fi
# The launcher is compiled once per version of its source.
classes="$cache/classes-$(sha256sum "$here/Launcher.java" | cut -c1-12)"
if [ ! -d "$classes" ]; then
  exec 9>"$cache.lock"
  flock 9
  if [ ! -d "$classes" ]; then
    javac -d "$classes.tmp.$$" -cp "$cache/lib/*" "$here/Launcher.java"
    mv "$classes.tmp.$$" "$classes"
  fi
  flock -u 9
fi
if [ -n "$fetch_only" ]; then
  echo "run.sh: Neo4j $version is ready in $cache" >&2
  exit 0
fi
mkdir -p "$data"
# CAPSTAN_NEO4J_CONFIG adds settings, "name=value" separated by ";".
if [ -n "${CAPSTAN_NEO4J_CONFIG:-}" ]; then
  tr ';' '\n' <<<"$CAPSTAN_NEO4J_CONFIG" > "$data/neo4j.conf"
fi
# The JVM options the packaged server passes too: without the add-opens,
# the page cache and transaction logs fall back to slower paths. The heap
# is fixed (initial = max, as Neo4j's operations manual advises): a heap
# that grows and shrinks under a benchmark's import shows up as pauses in
# the latencies measured after it. CAPSTAN_NEO4J_HEAP overrides the size.
heap=${CAPSTAN_NEO4J_HEAP:-1g}
# CAPSTAN_NEO4J_JAVA_OPTS adds options: the tests' servers
# (internal/neo4jtest) compile with C1 alone, which starts a server for a
# fraction of the CPU; a benchmark's server keeps the full JIT.
# shellcheck disable=SC2086
exec java -Xms"$heap" -Xmx"$heap" -XX:+UseG1GC ${CAPSTAN_NEO4J_JAVA_OPTS:-} \
  --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED \
  --add-opens=java.base/sun.nio.ch=ALL-UNNAMED --enable-native-access=ALL-UNNAMED \
  -Dio.netty.tryReflectionSetAccessible=true -XX:+DisableExplicitGC -XX:-OmitStackTraceInFastThrow \
  -cp "$classes:$cache/lib/*" Launcher "$data" "$port"
