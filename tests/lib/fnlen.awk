# Prints "FILE:LINE NAME LENGTH" for every C function longer than MAX lines
# (awk -v MAX=100 -f fnlen.awk FILE...). A function, in the house's kernel
# style: a line at column 0 that ends a declarator with ")", then "{" alone
# at column 0, up to the next "}" at column 0. LENGTH counts the lines
# between the braces.
FNR == 1 { start = 0; prev = "" }
/^\{/ && prev ~ /^[A-Za-z_].*\)[[:space:]]*$/ { start = FNR; name = prev }
/^\}/ && start {
	len = FNR - start - 1
	if (len > MAX) {
		sub(/\(.*/, "", name)
		n = split(name, w, /[ *]+/)
		printf "%s:%d %s %d\n", FILENAME, start, w[n], len
	}
	start = 0
}
{ prev = $0 }
