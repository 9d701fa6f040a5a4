# bash completion for the AgentXDP tools.
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# One script for every tool, installed under each tool's name (make install
# copies it to completions/<tool> for every tool of the Makefile's TOOLS:
# bpf/<tool>.bpf.c and tools/<tool>.uses). Options come
# from the tool's own --help, so completion cannot drift from the tool, and
# the tools it completes come from where it sits, so no list is kept here.

_agentxdp_opts()
{
	# long options and the short ones argp lists, from "  -x, --long=ARG"
	"$1" --help 2>/dev/null | sed -nE \
		-e 's/^ {1,8}(-[[:alnum:]?]), (--[[:alnum:]-]+).*/\1 \2/p' \
		-e 's/^ {1,8}(--[[:alnum:]-]+).*/\1/p' \
		-e 's/^ {1,8}(-[[:alnum:]])( |$).*/\1/p'
}

_agentxdp()
{
	local cur prev words cword split
	_init_completion -s || return

	case $prev in
	-i|--interface)
		COMPREPLY=($(compgen -W "$(ls /sys/class/net 2>/dev/null)" -- "$cur"))
		return ;;
	--prom|-r|--read|--svg|-w|--write)
		_filedir
		return ;;
	-N|--netns)
		COMPREPLY=($(compgen -W "$(ip netns list 2>/dev/null | cut -d' ' -f1)" -- "$cur"))
		return ;;
	--hook)
		COMPREPLY=($(compgen -W "prerouting input forward output postrouting ingress egress" -- "$cur"))
		return ;;
	--family)
		COMPREPLY=($(compgen -W "ip ip6 inet arp bridge netdev" -- "$cur"))
		return ;;
	--direction)
		COMPREPLY=($(compgen -W "egress ingress" -- "$cur"))
		return ;;
	--class)
		COMPREPLY=($(compgen -W "requests acks naks read-responses cnps" -- "$cur"))
		return ;;
	-S|--sort)
		COMPREPLY=($(compgen -W "trouble pkts bytes lat qp" -- "$cur"))
		return ;;
	-P|--port|--roce-port|-Q|--qpn|-n|--rows|--timeout)
		return ;;
	esac
	$split && return

	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_agentxdp_opts "$1")" -- "$cur"))
		[[ ${COMPREPLY-} == *= ]] && compopt -o nospace
		return
	fi
	# rocelat -r FILE FILE...: the arguments after -r are more files
	local w
	for w in "${words[@]:1:cword-1}"; do
		case $w in
		-r|--read|--read=*) _filedir; return ;;
		esac
	done
}

# the tools to complete: installed as completions/<tool>, that one (which
# bash-completion loads when <tool> is first completed); sourced from a
# checkout (completion/agentxdp.bash), every tools/<tool>/<tool>.bpf.c
# and tools/<tool>/<tool>.uses beside it
_agentxdp_tools()
{
	local self=${BASH_SOURCE[0]} dir=. f
	if [[ ${self##*/} != agentxdp.bash ]]; then
		echo "${self##*/}"
		return
	fi
	[[ $self != */* ]] || dir=${self%/*}
	for f in "$dir"/../tools/*/*.bpf.c "$dir"/../tools/*/*.uses; do
		[[ -e $f ]] || continue
		f=${f##*/}
		f=${f%.bpf.c}
		echo "${f%.uses}"
	done
}

_agentxdp_tools_list=$(_agentxdp_tools)
[[ -z $_agentxdp_tools_list ]] || complete -F _agentxdp $_agentxdp_tools_list
unset _agentxdp_tools_list
