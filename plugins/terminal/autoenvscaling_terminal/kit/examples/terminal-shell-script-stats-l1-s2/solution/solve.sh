#!/bin/bash
# Reference solution.
set -eu
cd /app

mkdir -p /app/scripts
cat > /app/scripts/numstats.sh <<'EOF'
#!/bin/bash
col=1
file="$1"
awk -F, -v col="$col" '
/^[[:space:]]*$/ { next }
{ v = $col
  if (v !~ /^-?[0-9]+$/) { printf "error: line %d: not a number\n", NR > "/dev/stderr"; bad = 1; exit 2 }
  v += 0; n++; s += v
  if (n == 1 || v < mn) mn = v
  if (n == 1 || v > mx) mx = v }
END { if (bad) exit 2; print "count=" n " " "sum=" s " " "min=" mn " " "max=" mx }
' "$file"
EOF
chmod +x /app/scripts/numstats.sh
