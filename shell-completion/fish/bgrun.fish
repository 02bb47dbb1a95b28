# SPDX-License-Identifier: MIT
# fish completion for bgrun(1): verbs, options, -p properties, durations,
# signals, sessions and job ids (from `bgrun list --json`).

set -l bgrun_verbs run status show logs attach stop kill send list ls wait forget reap mcp help

# The bus options given before the verb, for the bgrun list that finds ids.
function __bgrun_bus_args
    set -l words (commandline -opc)
    set -e words[1]
    set -l i 1
    while test $i -le (count $words)
        switch $words[$i]
            case --user --system '--host=*' '--address=*'
                echo $words[$i]
            case -H --host --address
                echo $words[$i]
                set i (math $i + 1)
                test $i -le (count $words); and echo $words[$i]
            case '-*'
            case '*'
                return
        end
        set i (math $i + 1)
    end
end

# __bgrun_jobs [running|ended]: "ID<TAB>STATUS" of the jobs the caller sees.
function __bgrun_jobs
    bgrun (__bgrun_bus_args) list --json 2>/dev/null |
        string match -ar '"id":"[a-z0-9]+","session_id":"(?:[^"\\\\]|\\\\.)*","status":"[a-z_]+"' |
        string replace -r '^"id":"([a-z0-9]+)".*"status":"([a-z_]+)"$' '$1\t$2' |
        while read -l line
            set -l job_status (string split \t -- $line)[2]
            switch "$argv[1]"
                case running
                    contains -- "$job_status" running queued; or continue
                case ended
                    not contains -- "$job_status" running queued; or continue
            end
            echo $line
        end
end

function __bgrun_sessions
    bgrun (__bgrun_bus_args) list --json 2>/dev/null |
        string match -ar '"session_id":"[^"\\\\]+"' |
        string replace -r '^"session_id":"(.*)"$' '$1' | sort -u
end

# A duration: the number typed so far with each unit.
function __bgrun_durations
    set -l token (commandline -ct)
    set -l prefix ''
    if string match -qr '=' -- $token
        set prefix (string replace -r '=.*' '=' -- $token)
        set token (string replace -r '^[^=]*=' '' -- $token)
    end
    string match -qr '^[0-9]+$' -- $token; or return
    for unit in us ms s min h d w
        echo $prefix$token$unit
    end
end

# -p PROP=VALUE: the Launch options bgrun run -p accepts (src/bgrun/launch-args.c).
function __bgrun_properties
    set -l token (commandline -ct)
    switch $token
        case 'User=*'
            __fish_complete_users | string replace -r '^' 'User='
        case 'MemoryMax=*' 'TasksMax=*'
            echo (string replace -r '=.*' '' -- $token)=infinity
        case 'StopSignal=*'
            printf 'StopSignal=%s\n' TERM INT HUP QUIT KILL USR1 USR2 ALRM
        case 'RequestId=*' 'MaxParallel=*'
        case 'PrivateNetwork=*' 'PrivateTmp=*' 'ProtectGit=*' 'Queue=*'
            printf '%s\n' (string replace -r '=.*' '' -- $token)={yes,no}
        case 'ProtectSystem=*'
            printf 'ProtectSystem=%s\n' no yes full strict
        case 'ProtectHome=*'
            printf 'ProtectHome=%s\n' no yes read-only tmpfs
        case 'RestrictAddressFamilies=*'
            printf 'RestrictAddressFamilies=%s\n' AF_UNIX AF_INET AF_INET6 AF_NETLINK AF_PACKET '~AF_UNIX' '~AF_INET' '~AF_INET6' '~AF_NETLINK' '~AF_PACKET'
        case 'ReadWritePaths=*' 'ReadOnlyPaths=*' 'InaccessiblePaths=*'
            set -l name (string replace -r '=.*' '' -- $token)
            __fish_complete_directories (string replace -r '^[^=]*=' '' -- $token) | string replace -r '^' "$name="
        case 'MaxRuntimeUSec=*' 'CPUQuotaPerSecUSec=*' 'StopGraceUSec=*'
            __bgrun_durations
        case '*'
            printf '%s\n' 'MemoryMax=' 'TasksMax=' 'CPUQuotaPerSecUSec=' 'MaxRuntimeUSec=' 'StopSignal=' 'StopGraceUSec=' 'User=' 'PrivateNetwork=' 'PrivateTmp=' 'ProtectSystem=' 'ProtectHome=' 'ReadWritePaths=' 'ReadOnlyPaths=' 'InaccessiblePaths=' 'ProtectGit=' 'RestrictAddressFamilies=' 'AllowedDomains=' 'RequestId=' 'Queue=' 'MaxParallel='
    end
end

function __bgrun_verb_is
    __fish_seen_subcommand_from $argv
end

complete -c bgrun -f
# Before the verb.
complete -c bgrun -n "not __fish_seen_subcommand_from $bgrun_verbs" -l user -d 'Talk to the per-user bgrund'
complete -c bgrun -n "not __fish_seen_subcommand_from $bgrun_verbs" -l system -d 'Talk to the system bgrund'
complete -c bgrun -n "not __fish_seen_subcommand_from $bgrun_verbs" -s H -l host -x -a '(__fish_print_hostnames)' -d 'Another host, over SSH'
complete -c bgrun -n "not __fish_seen_subcommand_from $bgrun_verbs" -l address -x -a 'unix:path=/run/bgrun/bus' -d 'A D-Bus address'
complete -c bgrun -n "not __fish_seen_subcommand_from $bgrun_verbs" -l call-timeout -x -a '(__bgrun_durations)' -d 'The deadline of each call to bgrund'
complete -c bgrun -s h -l help -d 'Show the help'
complete -c bgrun -n "not __fish_seen_subcommand_from $bgrun_verbs" -l version -d 'Show the version'

complete -c bgrun -n "not __fish_seen_subcommand_from $bgrun_verbs" -a run -d 'Start a command as a background job'
complete -c bgrun -n "not __fish_seen_subcommand_from $bgrun_verbs" -a 'status show' -d "Show a job's record"
complete -c bgrun -n "not __fish_seen_subcommand_from $bgrun_verbs" -a logs -d "Print a job's output"
complete -c bgrun -n "not __fish_seen_subcommand_from $bgrun_verbs" -a attach -d "A --tty job's terminal, again"
complete -c bgrun -n "not __fish_seen_subcommand_from $bgrun_verbs" -a stop -d 'End jobs gracefully'
complete -c bgrun -n "not __fish_seen_subcommand_from $bgrun_verbs" -a kill -d 'End jobs at once'
complete -c bgrun -n "not __fish_seen_subcommand_from $bgrun_verbs" -a send -d "Write to a job's standard input"
complete -c bgrun -n "not __fish_seen_subcommand_from $bgrun_verbs" -a 'list ls' -d 'List jobs'
complete -c bgrun -n "not __fish_seen_subcommand_from $bgrun_verbs" -a wait -d 'Wait for jobs to end'
complete -c bgrun -n "not __fish_seen_subcommand_from $bgrun_verbs" -a forget -d "Remove ended jobs' records"
complete -c bgrun -n "not __fish_seen_subcommand_from $bgrun_verbs" -a reap -d 'Re-check every job (admin)'
complete -c bgrun -n "not __fish_seen_subcommand_from $bgrun_verbs" -a mcp -d 'Serve the API as MCP tools to an AI agent'
complete -c bgrun -n "not __fish_seen_subcommand_from $bgrun_verbs" -a help -d 'Show the help'
complete -c bgrun -n '__bgrun_verb_is help' -a "$bgrun_verbs"

# run
complete -c bgrun -n '__bgrun_verb_is run' -s s -l session -x -a '(__bgrun_sessions)' -d 'Tag the job with a session'
complete -c bgrun -n '__bgrun_verb_is run' -s C -l directory -x -a '(__fish_complete_directories)' -d 'Working directory'
complete -c bgrun -n '__bgrun_verb_is run' -s t -l timeout -x -a '(__bgrun_durations)' -d 'Wall-clock limit'
complete -c bgrun -n '__bgrun_verb_is run' -s E -l setenv -x -a '(set -xn | string replace -r "\$" "=")' -d 'Set an environment variable'
complete -c bgrun -n '__bgrun_verb_is run' -s p -l property -x -a '(__bgrun_properties)' -d 'Set a Launch option'
complete -c bgrun -n '__bgrun_verb_is run' -l clean-env -d "Pass none of the caller's environment"
complete -c bgrun -n '__bgrun_verb_is run' -l env-allow -x -a '(set -xn)' -d 'Pass a variable the rules drop'
complete -c bgrun -n '__bgrun_verb_is run' -l stdin -d 'Forward standard input to the job'
complete -c bgrun -n '__bgrun_verb_is run' -l open-stdin -d 'Keep the input open for bgrun send'
complete -c bgrun -n '__bgrun_verb_is run' -l tty -d 'Run on a terminal attached to this one'
complete -c bgrun -n '__bgrun_verb_is run' -l wait -d "Stream the output, exit with the job's status"
complete -c bgrun -n '__bgrun_verb_is run' -l strict-limits -d 'Refuse the job if a limit cannot be enforced'
complete -c bgrun -n '__bgrun_verb_is run' -l request-id -r -d 'Launch at most once under this ID'
complete -c bgrun -n '__bgrun_verb_is run' -l queue -d 'Wait in the queue past the limits instead of failing'
complete -c bgrun -n '__bgrun_verb_is run' -l parallel -x -d "At most N of the session's jobs run at once"
complete -c bgrun -n '__bgrun_verb_is run mcp' -l allow-domain -x -d 'Reach this host over HTTP(S), and nothing else'
complete -c bgrun -n '__bgrun_verb_is run' -s q -l quiet -d 'Do not say which job runs'
complete -c bgrun -n '__bgrun_verb_is run status show logs kill list ls wait reap' -l json -d 'Print JSON'

# Job ids.
complete -c bgrun -n '__bgrun_verb_is status show logs wait' -a '(__bgrun_jobs)'
complete -c bgrun -n '__bgrun_verb_is stop kill send attach' -a '(__bgrun_jobs running)'
complete -c bgrun -n '__bgrun_verb_is forget' -a '(__bgrun_jobs ended)'

complete -c bgrun -n '__bgrun_verb_is logs' -s f -l follow -d 'Keep printing until the job ends'
complete -c bgrun -n '__bgrun_verb_is logs' -s n -l lines -x -d 'Only the last lines'
complete -c bgrun -n '__bgrun_verb_is logs' -l offset -x -d 'From this byte of the output'
complete -c bgrun -n '__bgrun_verb_is logs' -l plain -d "Without a terminal's control sequences"
complete -c bgrun -n '__bgrun_verb_is list ls' -l status -x -a 'queued running exited killed timed_out failed' -d 'Only jobs in this status'
complete -c bgrun -n '__bgrun_verb_is stop' -l signal -x -a 'TERM INT HUP QUIT KILL USR1 USR2 ALRM' -d 'The signal to send first'
complete -c bgrun -n '__bgrun_verb_is stop' -l grace -x -a '(__bgrun_durations)' -d 'How long to wait before cgroup.kill'
complete -c bgrun -n '__bgrun_verb_is kill list ls forget' -s s -l session -x -a '(__bgrun_sessions)' -d 'One session'
complete -c bgrun -n '__bgrun_verb_is send' -s n -d 'No newline after the text'
complete -c bgrun -n '__bgrun_verb_is send' -l eof -d "End the job's input"
complete -c bgrun -n '__bgrun_verb_is wait' -s t -l timeout -x -a '(__bgrun_durations)' -d 'Give up after'
complete -c bgrun -n '__bgrun_verb_is wait' -l any -d 'Return when one job has ended'
complete -c bgrun -n '__bgrun_verb_is forget' -l ended -d 'Every ended job'
complete -c bgrun -n '__bgrun_verb_is mcp' -s s -l session -x -a '(__bgrun_sessions)' -d 'The session of the jobs'
complete -c bgrun -n '__bgrun_verb_is mcp' -l keep-jobs -d 'Leave the jobs running when the agent goes away'
complete -c bgrun -n '__bgrun_verb_is mcp' -l output-limit -x -d 'Bytes of output per result'
complete -c bgrun -n '__bgrun_verb_is mcp' -l writable -x -a '(__fish_complete_directories)' -d 'Another directory sandboxed runs may write'
complete -c bgrun -n '__bgrun_verb_is mcp' -l no-protect-git -d "Leave git's hooks and config writable"
complete -c bgrun -n '__bgrun_verb_is forget' -l older-than -x -a '(__bgrun_durations)' -d 'Only jobs that ended longer ago'
