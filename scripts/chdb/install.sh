#!/usr/bin/env bash
# Installs chdb (ClickHouse 26 in process, about 550 MB) into scripts/chdb/node_modules for the ClickHouse suites
# and the report benchmark: what scripts/chdb/package-lock.json pins, from the npm registry.
# Plumb itself never loads it. Does nothing when the pinned version is already there.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
installed() {
  node -e '
    const lock = require(process.argv[1] + "/package-lock.json").packages;
    for (const [path, p] of Object.entries(lock)) {
      if (!path || p.optional) continue; // optional: other platforms
      if (require(process.argv[1] + "/" + path + "/package.json").version !== p.version) process.exit(1);
    }
    // and the engine of this platform (an optional dependency of chdb, one per platform)
    const platform = `${process.platform}-${process.arch}${process.platform === "linux" ? "-gnu" : ""}`;
    require(`${process.argv[1]}/node_modules/@chdb/lib-${platform}/package.json`);
  ' "$here" 2>/dev/null
}
if installed; then exit 0; fi
echo "Installing chdb (ClickHouse 26 in process) into $here/node_modules ..."
# npm install, not npm ci: the registry here holds only this platform's engine, so the lockfile has no entries for
# the other platforms' optional packages, which npm ci refuses; install keeps to the lockfile for everything it has.
npm install --prefix "$here" --no-save --no-audit --no-fund --loglevel=error
installed
