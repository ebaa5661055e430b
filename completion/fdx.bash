# bash completion for the fdx programs: fdx-ingest, fdx-export, fdx-top,
# fdx-merge, fdx-diff, fdx-prune and fdx-report. Installed once per program name, where
# bash-completion looks
# (share/bash-completion/completions/<program>); it can also be sourced.
# Needs only bash, not the bash-completion package.

# Sets COMPREPLY to the words of $1 that start with $2.
_fdx_words()
{
    local IFS=$' \t\n'
    mapfile -t COMPREPLY < <(compgen -W "$1" -- "$2")
}

# Sets COMPREPLY to the files (and directories, to descend into) matching $1.
_fdx_files()
{
    compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -f -- "$1")
}

# Sets COMPREPLY to the directories matching $1.
_fdx_dirs()
{
    compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -d -- "$1")
}

# Splits the word being completed into _fdx_cur and the option whose value it
# is into _fdx_opt ("" when it is not an option's value), handling both
# "--opt value" and "--opt=value" (bash splits the latter at '=').
_fdx_context()
{
    local cword=$COMP_CWORD
    _fdx_cur=${COMP_WORDS[cword]}
    _fdx_opt=""
    if [ "$_fdx_cur" = "=" ] && [ "$cword" -ge 2 ]; then
        _fdx_opt=${COMP_WORDS[cword - 1]}
        _fdx_cur=""
    elif [ "$cword" -ge 2 ] && [ "${COMP_WORDS[cword - 1]}" = "=" ]; then
        _fdx_opt=${COMP_WORDS[cword - 2]}
    elif [ "$cword" -ge 1 ]; then
        _fdx_opt=${COMP_WORDS[cword - 1]}
    fi
}

# Completes options and the values of options: $1 lists the options that take
# a value (given no completion unless the caller handled it first), $2 the
# others. Returns 1 when the word is an operand, for the caller to complete.
_fdx_options()
{
    if [[ " $1 " == *" $_fdx_opt "* ]]; then
        COMPREPLY=()
    elif [[ "$_fdx_cur" == -* ]]; then
        _fdx_words "$1 $2" "$_fdx_cur"
    else
        return 1
    fi
}

# How many operands precede the word being completed; $1 lists the options
# that take a value (so that the value is not counted as an operand).
_fdx_operands()
{
    local i n=0 w with_value=" $1 " ends=0
    for ((i = 1; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        if [ "$ends" = 1 ]; then
            n=$((n + 1))
        elif [ "$w" = "--" ]; then
            ends=1
        elif [ "$w" = "=" ]; then
            i=$((i + 1))
        elif [[ "$w" == -?* ]]; then
            [[ "$with_value" == *" $w "* && "${COMP_WORDS[i + 1]}" != "=" ]] && i=$((i + 1))
        else
            n=$((n + 1))
        fi
    done
    echo "$n"
}

_fdx_ingest()
{
    local _fdx_cur _fdx_opt
    _fdx_context
    if [ "$_fdx_opt" = --rejects ]; then
        _fdx_files "$_fdx_cur"
        return
    fi
    _fdx_options "--run-id --at --daily-days --rejects --max-errors --max-line-bytes
                  --max-depth --busy-timeout --threads" "--skip-invalid -q --quiet --progress --no-progress -h --help
                  -V --version" ||
        _fdx_files "$_fdx_cur" # DB, then JSONL files and run directories
}

_fdx_export()
{
    local _fdx_cur _fdx_opt
    _fdx_context
    if [ "$_fdx_opt" = --kind ]; then
        _fdx_words "misses dispatches" "$_fdx_cur"
        return
    fi
    _fdx_options "--busy-timeout --kind" "-q --quiet --progress --no-progress -h --help -V
                  --version" && return
    if [ "$(_fdx_operands "--busy-timeout --kind")" -eq 0 ]; then
        _fdx_files "$_fdx_cur" # DB
    else
        _fdx_dirs "$_fdx_cur" # OUTDIR
    fi
}

_fdx_top()
{
    local _fdx_cur _fdx_opt
    _fdx_context
    if [ "$_fdx_opt" = --cc ]; then
        _fdx_words "cpu" "$_fdx_cur"
        return
    fi
    _fdx_options "-n --top --cc --sku --op --source --since --until --growth" "--json --sql -q
                  --quiet -h --help -V --version" ||
        _fdx_files "$_fdx_cur" # DB
}

_fdx_merge()
{
    local _fdx_cur _fdx_opt
    _fdx_context
    _fdx_options "--busy-timeout" "-q --quiet --progress --no-progress -h --help -V --version" ||
        _fdx_files "$_fdx_cur" # DST, then SRC stores
}

_fdx_diff()
{
    local _fdx_cur _fdx_opt
    _fdx_context
    _fdx_options "-n --top" "--json -q --quiet -h --help -V --version" ||
        _fdx_files "$_fdx_cur" # A, then B
}

_fdx_prune()
{
    local _fdx_cur _fdx_opt
    _fdx_context
    if [ "$_fdx_opt" = --cc ]; then
        _fdx_words "cpu" "$_fdx_cur"
        return
    fi
    _fdx_options "--driver --revision --source --op --cc --sku --before --busy-timeout" "-n
                  --dry-run -q --quiet -h --help -V --version" ||
        _fdx_files "$_fdx_cur" # DB
}

_fdx_report()
{
    local _fdx_cur _fdx_opt
    _fdx_context
    _fdx_options "-n --top --busy-timeout" "-q --quiet -h --help -V --version" ||
        _fdx_files "$_fdx_cur" # DB, then OUT.html
}

complete -F _fdx_ingest fdx-ingest
complete -F _fdx_export fdx-export
complete -F _fdx_top fdx-top
complete -F _fdx_merge fdx-merge
complete -F _fdx_diff fdx-diff
complete -F _fdx_prune fdx-prune
complete -F _fdx_report fdx-report
