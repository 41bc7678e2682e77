#!/bin/sh
# Forms the Valkey Cluster of docker-compose.yml's "cluster" profile, once: three primaries
# with a replica each. The one-shot cluster-init service runs it on every
# `docker compose --profile cluster up`; the server nodes start only after it succeeded.
#
# - Fresh nodes (none knows another, none holds a slot): `valkey-cli --cluster create`.
# - A cluster formed before (cluster_state:ok): nothing to do.
# - A cluster formed before that does not come back healthy (its containers may have come
#   back on other addresses): every node is told where the others are now (CLUSTER MEET
#   updates a known node's address), then the script waits.
#
# It exits 0 only once every node reports cluster_state:ok and knows every other node,
# there are as many primaries as planned, and every replica's link to its primary is up:
# the servers wait for a replica on every move (SCORPION_REDIS_WAIT_REPLICAS).
set -eu

NODES=${CLUSTER_NODES:-"valkey-1 valkey-2 valkey-3 valkey-4 valkey-5 valkey-6"}
PORT=${CLUSTER_PORT:-6379}
REPLICAS=${CLUSTER_REPLICAS:-1}
TIMEOUT=${CLUSTER_TIMEOUT:-120}

say() { echo "cluster-init: $*"; }
die() { echo "cluster-init: $*" >&2; exit 1; }

# One command on one node; replies without their carriage returns, errors hidden.
cli() {
  _node=$1
  shift
  valkey-cli -h "$_node" -p "$PORT" "$@" 2>/dev/null | tr -d '\r'
}
cluster_field() { cli "$1" CLUSTER INFO | sed -n "s/^$2://p"; }
replication_field() { cli "$1" INFO replication | sed -n "s/^$2://p"; }
address() {
  set -- $(getent hosts "$1")
  [ $# -gt 0 ] || return 1
  echo "$1"
}

count=$(set -- $NODES; echo $#)
primaries=$((count / (REPLICAS + 1)))

# Wait until a check passes, for at most $2 seconds; say what was waited for if it never did.
wait_for() {
  _what=$1
  _until=$(($(date +%s) + $2))
  shift 2
  until "$@"; do
    [ "$(date +%s)" -lt "$_until" ] || return 1
    sleep 1
  done
  say "$_what: done"
}

all_answer() {
  for n in $NODES; do
    [ "$(cli "$n" PING)" = PONG ] || return 1
  done
}

fresh() {
  [ "$(cluster_field "$1" cluster_known_nodes)" = 1 ] && [ "$(cluster_field "$1" cluster_slots_assigned)" = 0 ]
}

healthy() {
  _primaries=0
  for n in $NODES; do
    [ "$(cluster_field "$n" cluster_state)" = ok ] || return 1
    [ "$(cluster_field "$n" cluster_known_nodes)" = "$count" ] || return 1
    case $(replication_field "$n" role) in
      master) _primaries=$((_primaries + 1)) ;;
      slave) [ "$(replication_field "$n" master_link_status)" = up ] || return 1 ;;
      *) return 1 ;;
    esac
  done
  [ "$_primaries" -eq "$primaries" ]
}

if ! wait_for "all $count nodes answer PING" "$TIMEOUT" all_answer; then
  silent=""
  for n in $NODES; do
    [ "$(cli "$n" PING)" = PONG ] || silent="$silent $n"
  done
  die "no answer to PING after ${TIMEOUT}s from:$silent"
fi

if [ "$(cluster_field "${NODES%% *}" cluster_state)" = ok ] && healthy; then
  say "the cluster is formed already and healthy"
  exit 0
fi

empty=""
formed=""
for n in $NODES; do
  if fresh "$n"; then empty="$empty $n"; else formed="$formed $n"; fi
done

if [ -z "$formed" ]; then
  addresses=""
  for n in $NODES; do
    ip=$(address "$n") || die "cannot resolve $n"
    say "$n is $ip"
    addresses="$addresses $ip:$PORT"
  done
  say "forming $primaries primaries with $REPLICAS replica(s) each"
  # $addresses unquoted: one argument per node.
  valkey-cli --cluster create $addresses --cluster-replicas "$REPLICAS" --cluster-yes
elif [ -n "$empty" ]; then
  die "these nodes are empty while the others formed a cluster:$empty." \
    "Add them back by hand (valkey-cli --cluster add-node), or remove the six nodes'" \
    "volumes (valkey-1-data to valkey-6-data) to start over."
elif ! wait_for "the cluster is healthy again" 20 healthy; then
  say "the cluster is not healthy yet: telling every node where the others are now"
  for n in $NODES; do
    for m in $NODES; do
      [ "$n" = "$m" ] && continue
      ip=$(address "$m") || die "cannot resolve $m"
      cli "$n" CLUSTER MEET "$ip" "$PORT" >/dev/null || true
    done
  done
fi

wait_for "the cluster is healthy (state ok, every replica in sync)" "$TIMEOUT" healthy \
  || die "the cluster is not healthy after ${TIMEOUT}s; see: valkey-cli -h ${NODES%% *} --cluster check ${NODES%% *}:$PORT"
