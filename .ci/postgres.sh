#!/bin/sh
# Makes sure a PostgreSQL database for the tests is up, and prints its URL (the value of
# COMPASS_TEST_POSTGRES or COMPASS_TEST_DATA). Idempotent: run as root, as often as you
# like; it installs Debian's postgresql if missing, starts cluster 15/main if down, and
# creates the role compass (password compass) and the database compass_ci if missing.
set -eu

url=postgres://compass:compass@127.0.0.1:5432/compass_ci

if ! command -v pg_ctlcluster >/dev/null 2>&1 || [ ! -x /usr/lib/postgresql/15/bin/postgres ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq postgresql >&2
fi
if [ ! -d /etc/postgresql/15/main ]; then
	pg_createcluster 15 main >&2
fi
if ! pg_ctlcluster 15 main status >/dev/null 2>&1; then
	pg_ctlcluster 15 main start >&2
fi
# Wait for it to take connections (a cluster just started may not yet).
i=0
until su postgres -c "psql -qAtc 'select 1'" >/dev/null 2>&1; do
	i=$((i + 1))
	if [ "$i" -ge 60 ]; then
		echo "postgres.sh: the cluster 15/main does not answer after 30 s" >&2
		exit 1
	fi
	sleep 0.5
done
if [ "$(su postgres -c "psql -qAtc \"select 1 from pg_roles where rolname = 'compass'\"")" != 1 ]; then
	su postgres -c "psql -qc \"create role compass login createdb password 'compass'\"" >&2
fi
if [ "$(su postgres -c "psql -qAtc \"select 1 from pg_database where datname = 'compass_ci'\"")" != 1 ]; then
	su postgres -c "createdb -O compass compass_ci" >&2
fi
echo "$url"
