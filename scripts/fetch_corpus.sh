#!/bin/sh
# fetch_corpus.sh: fetch real-world Java library jars (Debian's builds) for
# peggy-jvm's corpus tests and benchmarks.
#
#   scripts/fetch_corpus.sh [--all | --proguard | --ecj] [DIR]
#
# DIR defaults to $PEGGY_CORPUS, else ${XDG_CACHE_HOME:-$HOME/.cache}/peggy-jvm/corpus.
# Results: DIR/jars/<name>.jar (commons-lang3, commons-math3, guava, jsoup, jama;
# with --all also commons-collections4, commons-codec, commons-text, joda-time).
# --proguard fetches only DIR/tools/proguard.jar (Debian's ProGuard 6.2.2, run
# with `java -jar`; the validator's real pairs come from it) and prints its path.
# --ecj fetches DIR/tools/eclipse-jdt-core.jar (Debian's Eclipse compiler ecj 3.32, run as
# org.eclipse.jdt.internal.compiler.batch.Main) and DIR/src/commons-lang3-3.12.0.tar.xz (Debian's
# .orig tarball of commons-lang3 3.12.0, checked against its SHA-256) and prints both paths.
# The .deb files are kept in DIR/debs. Jars already present are not fetched again.
# Progress goes to stderr; stdout gets the path of every selected jar, one a line.
# Needs apt-get and dpkg-deb (Debian). If a download fails, `apt-get update`
# is run (via sudo when not root and sudo exists) and the download retried once.
set -eu

usage() {
    sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
}

log() {
    printf 'fetch_corpus: %s\n' "$*" >&2
}

ALL=0
DIR=
for arg in "$@"; do
    case $arg in
        --all) ALL=1 ;;
        --proguard) ALL=tools ;;
        --ecj) ALL=ecj ;;
        -h|--help) usage; exit 0 ;;
        -*) log "unknown option: $arg"; usage >&2; exit 2 ;;
        *)
            if [ -n "$DIR" ]; then log "only one DIR may be given"; exit 2; fi
            DIR=$arg ;;
    esac
done
if [ -z "$DIR" ]; then
    DIR=${PEGGY_CORPUS:-${XDG_CACHE_HOME:-$HOME/.cache}/peggy-jvm/corpus}
fi

# package:jar-name
CORE="libcommons-lang3-java:commons-lang3 libcommons-math3-java:commons-math3
libguava-java:guava libjsoup-java:jsoup libjama-java:jama"
EXTRA="libcommons-collections4-java:commons-collections4 libcommons-codec-java:commons-codec
libcommons-text-java:commons-text libjoda-time-java:joda-time"
TOOLS="libproguard-java:proguard"
ECJ="libeclipse-jdt-core-java:eclipse-jdt-core"
# commons-lang3's sources as Debian ships them (the .orig tarball of the source package the corpus jar is
# built from); Debian's archive serves it by this path; the checksum is the .dsc's (bookworm, 3.12.0-2+deb12u1)
LANG3_SRC_URL=http://deb.debian.org/debian/pool/main/libc/libcommons-lang3-java/libcommons-lang3-java_3.12.0.orig.tar.xz
LANG3_SRC_SHA256=f7c22574707611b63bae19ff17f59e24cdd32e2b0e61a50ec9b1b525fbc909d1
LANG3_SRC=commons-lang3-3.12.0.tar.xz
SELECTED=$CORE
OUTDIR=jars
if [ "$ALL" = 1 ]; then SELECTED="$CORE $EXTRA"; fi
if [ "$ALL" = tools ]; then SELECTED=$TOOLS; OUTDIR=tools; fi
if [ "$ALL" = ecj ]; then SELECTED=$ECJ; OUTDIR=tools; fi

for tool in apt-get dpkg-deb; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        log "$tool not found (this script needs a Debian-based system)"
        exit 1
    fi
done

mkdir -p "$DIR/debs" "$DIR/$OUTDIR" "$DIR/x"
# Absolute path, so that it still holds after cd.
DIR=$(cd "$DIR" && pwd)

# One fetch at a time per cache (parallel test workers all start with a fetch): the others wait, then find
# the jars there. flock is in util-linux (every Debian has it); without it, run unlocked.
if command -v flock >/dev/null 2>&1; then
    exec 9>"$DIR/.fetch.lock"
    flock 9
fi

as_root() {
    if [ "$(id -u)" = 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo -n "$@"
    else
        "$@"
    fi
}

# As root, apt would drop to its _apt sandbox user, which cannot write into a
# cache dir under root's home, and warns; download as root directly instead.
APT_OPTS=
if [ "$(id -u)" = 0 ]; then APT_OPTS="-o APT::Sandbox::User=root"; fi

UPDATED=0
# download PKG: leaves PKG_*.deb in $DIR/debs.
download() {
    # shellcheck disable=SC2086  # APT_OPTS is meant to split into words
    if (cd "$DIR/debs" && apt-get $APT_OPTS download "$1") >&2; then
        return 0
    fi
    if [ "$UPDATED" = 0 ]; then
        log "download of $1 failed; running apt-get update"
        as_root apt-get update >&2 || log "apt-get update failed"
        UPDATED=1
    fi
    log "retrying download of $1"
    # shellcheck disable=SC2086
    (cd "$DIR/debs" && apt-get $APT_OPTS download "$1") >&2
}

# newest_deb PKG: prints the newest PKG_*.deb in $DIR/debs (empty if none).
newest_deb() {
    for f in "$DIR/debs/$1"_*.deb; do
        [ -f "$f" ] && printf '%s\n' "$f"
    done | sort -V | tail -n 1
}

FAILED=0
for entry in $SELECTED; do
    pkg=${entry%%:*}
    name=${entry#*:}
    jar=$DIR/$OUTDIR/$name.jar
    if [ -s "$jar" ]; then
        log "have $name.jar"
        continue
    fi
    deb=$(newest_deb "$pkg")
    if [ -z "$deb" ]; then
        log "downloading $pkg"
        if ! download "$pkg"; then
            log "could not download $pkg"
            FAILED=1
            continue
        fi
        deb=$(newest_deb "$pkg")
        if [ -z "$deb" ]; then
            log "apt-get download $pkg left no .deb in $DIR/debs"
            FAILED=1
            continue
        fi
    fi
    x=$DIR/x/$pkg
    rm -rf "$x"
    mkdir -p "$x"
    dpkg-deb -x "$deb" "$x"
    # The versioned jar (e.g. guava-31.1.jar); fall back to the unversioned name.
    src=
    for f in "$x/usr/share/java/$name"-[0-9]*.jar; do
        if [ -f "$f" ]; then src=$f; break; fi
    done
    if [ -z "$src" ] && [ -f "$x/usr/share/java/$name.jar" ]; then
        src=$x/usr/share/java/$name.jar
    fi
    if [ -z "$src" ]; then
        log "no usr/share/java/$name-<version>.jar in $(basename "$deb")"
        rm -rf "$x"
        FAILED=1
        continue
    fi
    # Copy under a temporary name, then rename: an interrupted run leaves no partial jar.
    cp -L "$src" "$jar.tmp.$$"
    mv "$jar.tmp.$$" "$jar"
    rm -rf "$x"
    log "got $name.jar ($(basename "$src") from $(basename "$deb"))"
done

# fetch_source: commons-lang3's source tarball into $DIR/src, whole and checked, or not at all.
fetch_source() {
    src=$DIR/src/$LANG3_SRC
    if [ -s "$src" ]; then
        log "have $LANG3_SRC"
        return 0
    fi
    mkdir -p "$DIR/src"
    tmp=$src.tmp.$$
    log "downloading $LANG3_SRC_URL"
    if command -v curl >/dev/null 2>&1; then
        curl -fsSL -o "$tmp" "$LANG3_SRC_URL" || { rm -f "$tmp"; return 1; }
    elif command -v wget >/dev/null 2>&1; then
        wget -q -O "$tmp" "$LANG3_SRC_URL" || { rm -f "$tmp"; return 1; }
    else
        log "neither curl nor wget found"
        return 1
    fi
    got=$(sha256sum "$tmp" | cut -d' ' -f1)
    if [ "$got" != "$LANG3_SRC_SHA256" ]; then
        log "$LANG3_SRC: SHA-256 $got, expected $LANG3_SRC_SHA256"
        rm -f "$tmp"
        return 1
    fi
    mv "$tmp" "$src"
    log "got $LANG3_SRC"
}

if [ "$ALL" = ecj ]; then
    if fetch_source; then
        printf '%s\n' "$DIR/src/$LANG3_SRC"
    else
        log "could not fetch $LANG3_SRC"
        FAILED=1
    fi
fi

for entry in $SELECTED; do
    name=${entry#*:}
    if [ -s "$DIR/$OUTDIR/$name.jar" ]; then
        printf '%s\n' "$DIR/$OUTDIR/$name.jar"
    fi
done

if [ "$FAILED" != 0 ]; then
    log "some jars could not be fetched"
    exit 1
fi
