#!/usr/bin/env bash
# Starts Debian's clickhouse-server as an ordinary background process for tests and benchmarks: loopback only,
# data under $PLUMB_CLICKHOUSE_DIR (default /tmp/plumb-clickhouse), HTTP on $PLUMB_CLICKHOUSE_PORT (default 8123).
# Does nothing when a server already answers on that port. Install first: apt-get install -y clickhouse-server
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="${PLUMB_CLICKHOUSE_DIR:-/tmp/plumb-clickhouse}"
http_port="${PLUMB_CLICKHOUSE_PORT:-8123}"
tcp_port="${PLUMB_CLICKHOUSE_TCP_PORT:-9000}"

# True when the HTTP interface answers /ping with "Ok." (bash's /dev/tcp: no HTTP client needed).
answering() {
  (exec 3<>"/dev/tcp/127.0.0.1/$http_port" && printf 'GET /ping HTTP/1.0\r\n\r\n' >&3 && grep -q '^Ok\.' <&3) 2>/dev/null
}
if answering; then echo "ClickHouse already answers on 127.0.0.1:$http_port"; exit 0; fi

mkdir -p "$dir"/{log,data,tmp,user_files,format_schemas,etc}
sed -e "s|@DIR@|$dir|g" -e "s|@HTTP_PORT@|$http_port|g" -e "s|@TCP_PORT@|$tcp_port|g" "$here/config.xml" > "$dir/etc/config.xml"
cp "$here/users.xml" "$dir/etc/users.xml"
server="$(command -v clickhouse-server || echo /usr/sbin/clickhouse-server)"
# Debian's package runs the server as its own user; as root we run it directly on our own config and data.
nohup "$server" --config-file="$dir/etc/config.xml" > "$dir/log/stdout.log" 2>&1 &
for _ in $(seq 1 150); do
  if answering; then
    echo "ClickHouse answers on 127.0.0.1:$http_port (data in $dir)"; exit 0
  fi
  sleep 0.2
done
echo "ClickHouse did not start; see $dir/log" >&2
tail -n 30 "$dir/log/stdout.log" "$dir/log/error.log" >&2 || true
exit 1
