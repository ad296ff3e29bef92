# Sourced by hack/build-*.sh after setting $bin: bin/.versions records what
# was built into bin/, a line "NAME KEY" per binary (KEY: its version, or
# version+recipe hash), so that each is rebuilt only when missing or built
# as another KEY.
mkdir -p "$bin"
versions_file="$bin/.versions"
touch "$versions_file"

# build_lock NAME: hold the lock bin/.NAME.lock until the script exits, so
# that a second build of the same thing (CI builds ahead in the background)
# waits for the first and then finds it cached.
build_lock() { exec 9>"$bin/.$1.lock"; flock 9; }

# built_version NAME: the KEY bin/NAME was built as (empty: none recorded).
built_version() { awk -v n="$1" '$1==n{print $2}' "$versions_file"; }

# is_built NAME KEY: bin/NAME exists and was built as KEY.
is_built() { [ -x "$bin/$1" ] && [ "$(built_version "$1")" = "$2" ]; }

# record NAME KEY: bin/NAME is now built as KEY. Builds may run side by
# side, so the file is rewritten under a lock.
record() {
  (
    flock 8
    grep -v "^$1 " "$versions_file" >"$versions_file.tmp.$$" || true
    echo "$1 $2" >>"$versions_file.tmp.$$"
    mv "$versions_file.tmp.$$" "$versions_file"
  ) 8>"$versions_file.lock"
}
