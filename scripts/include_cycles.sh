#!/bin/sh
# The include graph of the C modules, and whether it has a cycle.
#
# A module is a .c file and its header, named by their path without the
# extension (src/rel/relcache.c and src/rel/relcache.h are src/rel/relcache;
# a header without a .c, such as src/compat.h, is a module of its own). Each
# #include "src/..." line of a module's files is an edge from that module to
# the header's; a .c including its own header is none. Prints the graph, one
# module a line with what it includes, then each cycle found between
# different modules; exits 1 when there is one, 0 otherwise.
#
# POSIX sh and awk only. Run from anywhere: scripts/include_cycles.sh
set -eu

cd "$(dirname "$0")/.."

files=$( { ls awa_bgw.c 2>/dev/null; find src -name '*.c' -o -name '*.h'; } | sort)

# each file alone ("path:"), so that a module nothing includes is listed too,
# then its includes of the project's headers ("path:#include "src/...")
{
	for f in $files; do
		echo "$f:"
	done
	# shellcheck disable=SC2086
	grep -H '^[[:space:]]*#[[:space:]]*include[[:space:]]*"src/' $files /dev/null || :
} |
awk '
function module(path)
{
	sub(/\.[ch]$/, "", path)
	return path
}

# depth-first search from m: stack[1..depth] is the path to m, state[] 1 while
# a module is on it and 2 once done; a dependency on the path closes a cycle
function visit(m,    deps, n, i, d, j, cycle)
{
	state[m] = 1
	stack[++depth] = m
	n = split(edges[m], deps, " ")
	for (i = 1; i <= n; i++)
	{
		d = deps[i]
		if (state[d] == 1)
		{
			cycle = d
			for (j = depth; j >= 1 && stack[j] != d; j--)
				cycle = stack[j] " -> " cycle
			print "cycle: " d " -> " cycle
			ncycles++
		}
		else if (state[d] == 0)
			visit(d)
	}
	depth--
	state[m] = 2
}

{
	colon = index($0, ":")
	from = module(substr($0, 1, colon - 1))
	modules[from] = 1
	line = substr($0, colon + 1)
	if (line == "")
		next
	sub(/^[^"]*"/, "", line)
	sub(/".*$/, "", line)
	to = module(line)
	modules[to] = 1
	if (from == to || seen[from, to]++)
		next
	edges[from] = edges[from] (edges[from] == "" ? "" : " ") to
}

END {
	n = 0
	for (m in modules)
		names[++n] = m
	# insertion sort: the output is the same on every awk
	for (i = 2; i <= n; i++)
	{
		m = names[i]
		for (j = i - 1; j >= 1 && names[j] > m; j--)
			names[j + 1] = names[j]
		names[j + 1] = m
	}
	for (i = 1; i <= n; i++)
	{
		k = split(edges[names[i]], deps, " ")
		for (a = 2; a <= k; a++)
		{
			d = deps[a]
			for (b = a - 1; b >= 1 && deps[b] > d; b--)
				deps[b + 1] = deps[b]
			deps[b + 1] = d
		}
		line = names[i] " ->"
		for (a = 1; a <= k; a++)
			line = line " " deps[a]
		print line
		edges[names[i]] = ""
		for (a = 1; a <= k; a++)
			edges[names[i]] = edges[names[i]] (a > 1 ? " " : "") deps[a]
	}
	ncycles = 0
	depth = 0
	for (i = 1; i <= n; i++)
		if (state[names[i]] == 0)
			visit(names[i])
	if (ncycles > 0)
	{
		print ncycles " include cycle(s) between modules" | "cat 1>&2"
		exit 1
	}
	print "no include cycle between modules (" n " modules)"
}'
