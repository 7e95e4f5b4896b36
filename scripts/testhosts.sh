#!/usr/bin/env bash
# Test hosts on this machine: each a network namespace with a veth address
# and a real OpenSSH sshd, its own host key, hostname (UTS) and processes
# (a PID namespace), its own /etc, /root, /srv, /tmp and /run (private
# bind mounts and tmpfs in its mount namespace), and root's login by the
# one client key authorized. Nothing
# leaves the machine. Run as root.
#
#   testhosts.sh up DIR COUNT     make COUNT hosts under DIR; prints one line
#                                 per host: name address port host-key-line
#   testhosts.sh down DIR         kill every process in them and remove them
#   testhosts.sh kill-sshd DIR N  kill host N's sshd processes, as a crash
#                                 would (what their sessions ran stays)
#   testhosts.sh start-sshd DIR N start it again
#   testhosts.sh exec DIR N CMD…  run CMD on host N (in its namespaces), as
#                                 a person logged in there would
#
# DIR/client_ed25519 is the client's private key; DIR/hN/fs/{etc,srv,root}
# are what host N sees at /etc, /srv and /root.
set -euo pipefail

die() { echo "testhosts: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces)"
cmd=${1:-}; dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || die "usage: testhosts.sh up|down|kill-sshd|start-sshd|exec DIR [N [CMD…]]"

ns_of() { echo "capstan-$(cat "$dir/tag")-h$1"; }

# start_host starts the host's init: PID 1 of a PID namespace of its own
# (so a host sees, and userdel counts, only its own processes), in its
# network namespace, with its hostname and its private mounts; sshd and
# everything it starts live below it.
start_host() {
  local i=$1 h="$dir/h$1" ns
  ns=$(ns_of "$i")
  rm -f "$h/ready"
  setsid ip netns exec "$ns" unshare --uts --pid --fork --mount-proc bash -c '
    set -e
    h=$1
    hostname "$2"
    mount --make-rprivate /
    mount --bind "$h/fs/etc" /etc
    mount --bind "$h/fs/root" /root
    mkdir -p /srv && mount --bind "$h/fs/srv" /srv
    mount -t tmpfs -o mode=1777 testhost-tmp /tmp
    mount -t tmpfs -o mode=0755 testhost-run /run
    mkdir -p /run/sshd && chmod 0755 /run/sshd
    echo $$ > "$h/ready"
    while :; do sleep 1; done
  ' testhost "$h" "h$i" >>"$h/init.log" 2>&1 < /dev/null &
  for _ in $(seq 1 100); do
    [ -s "$h/ready" ] && break
    sleep 0.05
  done
  [ -s "$h/ready" ] || { cat "$h/init.log" >&2; die "host $i did not start"; }
  # The init's pid as this machine sees it: the child of unshare.
  local unshare=$! init=""
  for _ in $(seq 1 100); do
    init=$(pgrep -P "$unshare" | head -1)
    [ -n "$init" ] && break
    sleep 0.05
  done
  [ -n "$init" ] || die "host $i: no init process"
  echo "$init" > "$h/init.pid"
}

start_sshd() {
  local i=$1 h="$dir/h$1"
  nsenter --target "$(cat "$h/init.pid")" --net --mount --uts --pid -- \
    /usr/sbin/sshd -D -e -f "$h/sshd_config" >>"$h/sshd.log" 2>&1 < /dev/null &
  echo $! > "$h/sshd.pid"
  local addr; addr=$(cat "$h/address")
  for _ in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/$addr/22") 2>/dev/null; then return 0; fi
    sleep 0.05
  done
  cat "$h/sshd.log" >&2
  die "host $i: sshd did not listen on $addr:22"
}

# tree lists a process and its descendants.
tree() {
  local c
  echo "$1"
  for c in $(pgrep -P "$1" || true); do tree "$c"; done
}

# kill_sshd kills an sshd and every sshd process below it (one per
# connection) at once, as a crash of sshd would: the connections drop,
# and what the sessions ran stays on the host, orphaned.
kill_sshd() {
  local pids=() p
  for p in $(tree "$1"); do
    case "$(cat "/proc/$p/comm" 2>/dev/null)" in sshd*) pids+=("$p") ;; esac
  done
  [ ${#pids[@]} -eq 0 ] || kill -9 "${pids[@]}" 2>/dev/null || true
}

kill_ns() {
  local ns=$1
  local pids; pids=$(ip netns pids "$ns" 2>/dev/null || true)
  [ -n "$pids" ] && kill -9 $pids 2>/dev/null || true
}

case "$cmd" in
up)
  count=${3:?count}
  command -v ip >/dev/null || die "ip (iproute2) is missing: scripts/system-deps.sh installs it"
  [ -x /usr/sbin/sshd ] || die "sshd is missing: scripts/system-deps.sh installs openssh-server"
  mkdir -p "$dir"
  [ -f "$dir/tag" ] || head -c 2 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$dir/tag"
  tag=$(cat "$dir/tag")
  # A /16 of 10.0.0.0/8 that nothing on this machine routes yet. Tests
  # bring hosts up in parallel: one `up` at a time chooses and routes
  # its block (the lock is closed once the block is routed, before any
  # daemon starts: one that inherited it would hold it for its life).
  exec 8>"${TMPDIR:-/tmp}/capstan-testhosts.lock"
  flock 8
  octet=""
  for _ in $(seq 1 50); do
    o=$((100 + RANDOM % 150))
    # An address on a link that is still down has no route yet: look at
    # both, or two tests could take one block (and one host's address
    # would reach the other's sshd).
    if ! ip -4 route show | grep -q "^10\.$o\." && ! ip -4 -o addr show | grep -q " 10\.$o\."; then octet=$o; break; fi
  done
  [ -n "$octet" ] || die "no free 10.x.0.0/16 for the test hosts"
  [ -f "$dir/client_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C capstan-test-client -f "$dir/client_ed25519"
  cp "$dir/client_ed25519.pub" "$dir/authorized_keys"
  for i in $(seq 1 "$count"); do
    h="$dir/h$i" ns="capstan-$tag-h$i" veth="ct${tag}h$i"
    mkdir -p "$h/fs/srv" "$h/fs/root"
    # /etc changes under a running machine (a test makes and removes a
    # directory there): a file gone before cp reads it is no error; any
    # other failure is.
    if ! cp -a /etc "$h/fs/etc" 2>"$h/copy.err"; then
      if grep -v "No such file or directory" "$h/copy.err" >&2; then die "copying /etc for h$i failed"; fi
    fi
    ssh-keygen -q -t ed25519 -N '' -C "testhost-$i" -f "$h/ssh_host_ed25519_key"
    addr="10.$octet.$i.2"
    echo "$addr" > "$h/address"
    # No DNS leaves the machine: names resolve from the host's own
    # /etc/hosts, and a lookup past it fails at once.
    # (Either may be a symlink into the machine's /run: replaced, never
    # written through.)
    { cat "$h/fs/etc/hosts" 2>/dev/null || true; echo "$addr h$i"; } > "$h/hosts.new"
    rm -f "$h/fs/etc/hosts" "$h/fs/etc/resolv.conf"
    mv "$h/hosts.new" "$h/fs/etc/hosts"
    echo "nameserver 127.0.0.1" > "$h/fs/etc/resolv.conf"
    cat > "$h/sshd_config" <<CONF
ListenAddress $addr
Port 22
HostKey $h/ssh_host_ed25519_key
PidFile none
AuthorizedKeysFile $dir/authorized_keys
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PermitRootLogin prohibit-password
AllowUsers root
MaxStartups 200
MaxSessions 100
ClientAliveInterval 10
LogLevel ERROR
Subsystem sftp internal-sftp
CONF
    ip netns add "$ns"
    ip link add "$veth" type veth peer name eth0 netns "$ns"
    ip addr add "10.$octet.$i.1/24" dev "$veth"
    ip link set "$veth" up
    exec 8>&- # addressed and routed: the next `up` sees the block taken
    ip -n "$ns" link set lo up
    ip -n "$ns" addr add "$addr/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" route add default via "10.$octet.$i.1"
    start_host "$i"
    start_sshd "$i"
    echo "h$i $addr 22 $(cut -d' ' -f1,2 "$h/ssh_host_ed25519_key.pub")"
  done
  ;;
down)
  [ -f "$dir/tag" ] || exit 0
  tag=$(cat "$dir/tag")
  for ns in $(ip netns list | awk '{print $1}' | grep "^capstan-$tag-h" || true); do
    kill_ns "$ns"
    ip netns del "$ns"
  done
  ;;
kill-sshd)
  i=${3:?host}
  kill_sshd "$(cat "$dir/h$i/sshd.pid")"
  ;;
start-sshd)
  start_sshd "${3:?host}"
  ;;
exec)
  i=${3:?host}; shift 3
  exec nsenter --target "$(cat "$dir/h$i/init.pid")" --net --mount --uts --pid -- "$@"
  ;;
*)
  die "unknown command $cmd"
  ;;
esac
