#!/bin/sh
# fetch_unseen_extraction.sh: fetch the extraction-gym e-graphs of issue 21's "unseen instances" measurement
# (families that are not in ../shared/extraction), for scripts/bench_extract.py.
#
#   scripts/fetch_unseen_extraction.sh [DIR]
#
# DIR defaults to ${XDG_CACHE_HOME:-$HOME/.cache}/peggy-jvm/extraction-unseen. Each file goes to
# DIR/<family>/<name> from raw.githubusercontent.com, pinned to the commit it was measured at
# (egraphs-good/extraction-gym, MIT license: public data, never committed to this repository).
# Files already present are not fetched again. Needs curl. Then:
#   scripts/bench_extract.py DIR
# How they were chosen (before measuring; docs/benchmarks.md, "Extraction on unseen instances"): fuzz: all 20;
# babble: the first two of the listing; lean-egg: the first four of the listing and Basic #2; diospyros: the two
# under 100,000 characters met first in the listing.
# Session 14 (`unseen21`, the larger families, smallest first, each at most ~450,000 characters, as many as
# could be read in the session): babble: the next two in the listing; rover: the smallest file,
# box_filter_3iteration (287,950 characters).
# Session 16 (`ext22`, rule written before measuring): lean-egg in the listing's (alphabetical) order after the
# five above, every file of at most 20,000 characters, the first 12 (Ambient Level MVar #1 and Basic #8, over the
# cap, and BVar Index Correction #2, 702,106 characters, skipped). 11 of the 12 name a root class that no node
# belongs to: scripts/bench_extract.py reports them as bad instances (docs/benchmarks.md, session 16).
set -eu

DIR=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/peggy-jvm/extraction-unseen}
BASE=https://raw.githubusercontent.com/egraphs-good/extraction-gym

# commit  path-under-data/  (URL-encoded where needed)
LIST='
8b865f98438cfc0451d43d92d8790dd864ad14e7 fuzz/1.json
0da0cc161b8af2dd17853c3d2e4ec86654f1ef10 fuzz/10.json
a42b0f025e892fce460fe51fe86afdfb3c46fa00 fuzz/13.json
cd21350053659a7ff0213568e819220c09d7d178 fuzz/14.json
cd21350053659a7ff0213568e819220c09d7d178 fuzz/15.json
cd21350053659a7ff0213568e819220c09d7d178 fuzz/16.json
a42b0f025e892fce460fe51fe86afdfb3c46fa00 fuzz/18.json
68e9cdd0a845fee1ef3466501a04af98787deb7b fuzz/19.json
68e9cdd0a845fee1ef3466501a04af98787deb7b fuzz/25.json
e0e6d05b1279751a340ec2c754339ceeaab90f04 fuzz/26.json
68e9cdd0a845fee1ef3466501a04af98787deb7b fuzz/28.json
0c37c558b7531aa37430e28cf3c5f79a94d1351e fuzz/29.json
e0e6d05b1279751a340ec2c754339ceeaab90f04 fuzz/30.json
0c37c558b7531aa37430e28cf3c5f79a94d1351e fuzz/31.json
0c37c558b7531aa37430e28cf3c5f79a94d1351e fuzz/32.json
68e9cdd0a845fee1ef3466501a04af98787deb7b fuzz/36.json
cd21350053659a7ff0213568e819220c09d7d178 fuzz/5.json
cd21350053659a7ff0213568e819220c09d7d178 fuzz/6.json
0da0cc161b8af2dd17853c3d2e4ec86654f1ef10 fuzz/7.json
410b763ba856be619d08ccd576c5c77848dd94d9 fuzz/8.json
b51526b17baf5fc6905a0fb7bf7a8bb76fb894a8 babble/list_list_hard_test_ellisk_2019-02-15T11.26.41--bench000_it0.json
b51526b17baf5fc6905a0fb7bf7a8bb76fb894a8 babble/list_list_hard_test_ellisk_2019-02-15T11.26.41--bench001_it1.json
9d1f4307ecc09a5553b295524319beddf417ccb1 babble/list_list_hard_test_ellisk_2019-02-15T11.26.41--bench002_it2.json
b51526b17baf5fc6905a0fb7bf7a8bb76fb894a8 babble/list_list_hard_test_ellisk_2019-02-15T11.26.41--bench003_it4.json
93dec35f2876380806904a63bca70fe4325adcdd lean-egg/Basic%20%232.json
93dec35f2876380806904a63bca70fe4325adcdd lean-egg/Activations%20%231.json
93dec35f2876380806904a63bca70fe4325adcdd lean-egg/Activations%20%233.json
93dec35f2876380806904a63bca70fe4325adcdd lean-egg/Activations%20%234.json
5ab2538255273de8765c72261a684a749d3d9372 lean-egg/Activations%20%235.json
35defb00e648527f69e721a822c53794b8eade9a diospyros/simple_vec_add_root_7.json
35defb00e648527f69e721a822c53794b8eade9a diospyros/vector_mac_just_mul_or_zero_root_14.json
9fb66c6e8eb14e6da57719b6fd4f056fd9f5ba2c rover/box_filter_3iteration_egraph.json
5ab2538255273de8765c72261a684a749d3d9372 lean-egg/Ambient%20Expr%20MVar%20%231.json
903ba0f818b50608fe20ae9e0f03c35cb27bc50a lean-egg/Application%20Order%20%231.json
5ab2538255273de8765c72261a684a749d3d9372 lean-egg/Application%20Order%20%232.json
5ab2538255273de8765c72261a684a749d3d9372 lean-egg/Application%20Order%20%233.json
5ab2538255273de8765c72261a684a749d3d9372 lean-egg/BVar%20Index%20Correction%20%231.json
c14967e9ee5d132677deb4ada14b190e72b9f84b lean-egg/Basic%20%2310.json
c14967e9ee5d132677deb4ada14b190e72b9f84b lean-egg/Basic%20%234.json
903ba0f818b50608fe20ae9e0f03c35cb27bc50a lean-egg/Basic%20%235.json
5ab2538255273de8765c72261a684a749d3d9372 lean-egg/Basic%20%236.json
c14967e9ee5d132677deb4ada14b190e72b9f84b lean-egg/Basic%20%237.json
c14967e9ee5d132677deb4ada14b190e72b9f84b lean-egg/Basic%20%239.json
5ab2538255273de8765c72261a684a749d3d9372 lean-egg/Baskets%20%231.json
'

echo "$LIST" | while read -r commit path; do
    [ -n "$commit" ] || continue
    out="$DIR/$(printf '%s' "$path" | sed 's/%20/ /g; s/%23/#/g')"
    [ -s "$out" ] && continue
    mkdir -p "$(dirname "$out")"
    printf 'fetch_unseen_extraction: %s\n' "$path" >&2
    curl -fsSL "$BASE/$commit/data/$path" -o "$out.part" || { rm -f "$out.part"; exit 1; }
    mv "$out.part" "$out"
done
