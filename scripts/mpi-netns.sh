#!/bin/sh
# MPI ranks as nodes of their own on one host (issue 44): each rank in a
# network namespace of its own, with an address of its own on a bridge, so
# that Open MPI's ranks reach each other over TCP as across nodes (and
# never over shared memory). Needs root (or CAP_NET_ADMIN and
# CAP_SYS_ADMIN) and `ip`; traffic stays on the bridge.
#
#   scripts/mpi-netns.sh up TAG N [MS]  namespaces TAGh (the hub: a bridge,
#                                     10.44.0.100/24, where mpirun runs) and
#                                     TAGn0 .. TAGn(N-1) (10.44.0.1, ...);
#                                     with MS, each rank's packets leave MS
#                                     ms late (tc netem) where the kernel
#                                     has netem: prints "netem MS" then, else
#                                     "no netem" (the caller delays another way)
#   scripts/mpi-netns.sh down TAG N   removes them
#   scripts/mpi-netns.sh check        exits 0 where namespaces can be made
#
# mpirun runs in the hub and starts each rank in its namespace:
#   ip netns exec TAGh env PMIX_MCA_ptl_tcp_if_include=10.44.0.0/24 \
#     mpirun --mca btl self,tcp --mca btl_tcp_if_include 10.44.0.0/24 \
#     -np 1 ip netns exec TAGn0 ktlua tune.lua : -np 1 ip netns exec TAGn1 ktlua : ...
# Each namespace has its own addresses only: PMIx (mpirun's connection
# to its ranks) listens on the bridge too, as its loopback is the hub's.
# TAG: a few letters or digits, so that every interface name stays short.
set -eu
cmd=$1
case "$cmd" in
check)
  tag=kc$$
  ip netns add ${tag} 2>/dev/null || exit 1
  ip netns del ${tag}
  exit 0 ;;
up)
  tag=$2 n=$3 ms=${4:-}
  netem=${ms:+yes}
  ip netns add ${tag}h
  ip netns exec ${tag}h ip link set lo up
  ip netns exec ${tag}h ip link add br${tag} type bridge
  ip netns exec ${tag}h ip addr add 10.44.0.100/24 dev br${tag}
  ip netns exec ${tag}h ip link set br${tag} up
  i=0
  while [ $i -lt "$n" ]; do
    ns=${tag}n$i
    ip netns add $ns
    ip netns exec $ns ip link set lo up
    ip netns exec ${tag}h ip link add h${tag}$i type veth peer name e${tag}$i
    ip netns exec ${tag}h ip link set e${tag}$i netns $ns
    ip netns exec ${tag}h ip link set h${tag}$i master br${tag}
    ip netns exec ${tag}h ip link set h${tag}$i up
    ip netns exec $ns ip addr add 10.44.0.$((i + 1))/24 dev e${tag}$i
    ip netns exec $ns ip link set e${tag}$i up
    if [ "$netem" = yes ]; then
      ip netns exec $ns tc qdisc add dev e${tag}$i root netem delay ${ms}ms 2>/dev/null || netem=no
    fi
    i=$((i + 1))
  done
  if [ "$netem" = yes ]; then echo "netem $ms"; elif [ -n "$ms" ]; then echo "no netem"; fi ;;
down)
  tag=$2 n=$3
  i=0
  while [ $i -lt "$n" ]; do
    ip netns del ${tag}n$i 2>/dev/null || true
    i=$((i + 1))
  done
  ip netns del ${tag}h 2>/dev/null || true ;;
*)
  echo "usage: $0 up TAG N | down TAG N | check" >&2
  exit 2 ;;
esac
