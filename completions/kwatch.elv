
use builtin;
use str;

set edit:completion:arg-completer[kwatch] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'kwatch'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'kwatch'= {
            cand -n 'Namespace to watch (default: the context''s namespace, else "default")'
            cand --namespace 'Namespace to watch (default: the context''s namespace, else "default")'
            cand -A 'Watch all namespaces (kubectl''s --all-namespaces[=true|false] is accepted)'
            cand --all-namespaces 'Watch all namespaces (kubectl''s --all-namespaces[=true|false] is accepted)'
            cand -l 'Label selector (=, ==, !=, in, notin, exists, !key), as kubectl''s -l'
            cand --selector 'Label selector (=, ==, !=, in, notin, exists, !key), as kubectl''s -l'
            cand --field-selector 'Field selector, e.g. status.phase=Running'
            cand --record 'Also write the JSON-lines records to FILE (whatever -o shows); replay it with `kwatch replay FILE`'
            cand -o 'Output format: table, wide, json, yaml, name, watch-events (kubectl''s --output-watch-events -o json lines), custom-columns=HEADER:.path,… or jsonpath=TEMPLATE (kubectl''s syntax, applied per delta)'
            cand --output 'Output format: table, wide, json, yaml, name, watch-events (kubectl''s --output-watch-events -o json lines), custom-columns=HEADER:.path,… or jsonpath=TEMPLATE (kubectl''s syntax, applied per delta)'
            cand --color 'When to use colour: auto (a terminal and NO_COLOR unset), always or never'
            cand -L 'Table: a column with the value of each of these labels (comma-separated keys)'
            cand --label-columns 'Table: a column with the value of each of these labels (comma-separated keys)'
            cand --view 'What to print: deltas (what the informer''s queue hands out) or handlers (the OnAdd/OnUpdate/OnDelete calls client-go''s shared informer makes of them, for one handler whose resync period is --resync); handlers with -o table, wide, json or yaml'
            cand --kubeconfig 'Kubeconfig file (default: $KUBECONFIG, which may list several files, else ~/.kube/config)'
            cand --context 'Kubeconfig context to use; several, comma-separated, watch each cluster into one stream, every record tagged with its context'
            cand --request-timeout 'Timeout of each request before its response starts (0 = none), e.g. 10s, 1m'
            cand --cache-dir 'kubectl''s cache directory: discovery documents are read from and written to its discovery/ subdirectory, kept 6 hours [default: ~/.kube/cache]'
            cand -s 'The API server''s address, e.g. https://10.0.0.1:6443 (overrides the kubeconfig cluster''s server; works with no kubeconfig at all)'
            cand --server 'The API server''s address, e.g. https://10.0.0.1:6443 (overrides the kubeconfig cluster''s server; works with no kubeconfig at all)'
            cand --token 'Bearer token (replaces the kubeconfig user''s credentials)'
            cand --user 'The kubeconfig user to use instead of the context''s'
            cand --cluster 'The kubeconfig cluster to use instead of the context''s'
            cand --as 'Act as this user (Impersonate-User), e.g. system:serviceaccount:NS:NAME: see what that identity''s informer would get, 403s included'
            cand --as-group 'Act as a member of this group (Impersonate-Group; repeat for several)'
            cand --as-uid 'Act with this UID (Impersonate-Uid)'
            cand --certificate-authority 'CA certificate file(s) (PEM) to verify the server with (replaces the kubeconfig''s)'
            cand --client-certificate 'Client certificate file (PEM) for TLS client authentication'
            cand --client-key 'Client key file (PEM) for TLS client authentication'
            cand --tls-server-name 'Server name to verify the certificate against and send as SNI (default: the server URL''s host)'
            cand --page-size 'Objects per list page, 0 = no paging [default: 500, and no paging when relisting at a specific resourceVersion, as client-go]'
            cand --resync 'Re-queue every known object as a Sync delta this often (e.g. 30s); off by default'
            cand --fifo 'The informer''s queue: delta (DeltaFIFO: a key''s deltas coalesce until popped) or real (RealFIFO: every notification in order, the informers'' default since client-go 0.33; with --client-go, that release''s RealFIFO) [default: delta, or the --client-go release''s]'
            cand --watch-list 'Get the initial state from a streaming list (watch with sendInitialEvents, KEP-3157): auto tries it and falls back to LIST for good if the server rejects it, on tries it at every (re)list; auto, and a --client-go release''s default, mean off when --page-size is given [default: auto, or the --client-go release''s: off through 0.34, on from 0.35]'
            cand --min-watch-timeout 'Each watch asks the server to end it after a random time in [D, 2·D) (client-go: 5m)'
            cand --pop-delay 'Spend this long on each pop, as a slow event handler would: deltas pile up in the queue meanwhile, and DeltaFIFO''s per-key coalescing becomes visible'
            cand --client-go 'The informer of this client-go release, with its defaults: 0.32 (DeltaFIFO), 0.33 and 0.34 (RealFIFO), 0.35 (RealFIFO with batch pops; streaming lists on), 0.36 (the atomic RealFIFO: one ReplacedAll per relist, one SyncAll per resync). Also v0.35.2, or Kubernetes'' 1.35. --fifo and --watch-list override its defaults'
            cand --check-consistency 'After the first sync and then every PERIOD (5m if given without one), LIST at the store''s resourceVersion with resourceVersionMatch=Exact and compare it with the store: a Consistency record names the keys missing, extra or stale (client-go''s data consistency detector)'
            cand --max-events 'Exit 0 after printing this many deltas'
            cand --timeout 'Exit 0 after this long, e.g. 30s'
            cand --until 'Exit once a delta meets CONDITION, parsed as `kubectl wait --for`: `created` (an object kwatch did not know appears), `deleted` (an object is deleted, or none matched once synced), `jsonpath={.status.phase}=Running` (braces optional; a value equals, or without `=VALUE` is present and not false), or `condition=Ready[=True]` (type and status ignoring case). Exit 0 when met, 3 if --timeout comes first, 4 if the watch ends otherwise (--max-events)'
            cand -w 'Accepted and ignored, for kubectl''s habit (`kubectl get -w`): kwatch always watches'
            cand --watch 'Accepted and ignored, for kubectl''s habit (`kubectl get -w`): kwatch always watches'
            cand --every-resource 'Watch every resource the server can list and watch (only namespaced ones unless -A), events left out; RESOURCE adds more (`--every-resource events`). A resource the server refuses (403, 404, 405) is reported and left out, as with `all`'
            cand --sim 'Start the built-in simulated cluster in-process and watch it'
            cand --stats 'On exit, a summary on stderr: deltas by type, lists by reason, pages, bookmarks, backoffs, time to synced, largest queue depth, dedups'
            cand -v 'More diagnostics on stderr (-v, -vv, -vvv); RUST_LOG overrides'
            cand --verbose 'More diagnostics on stderr (-v, -vv, -vvv); RUST_LOG overrides'
            cand --show-managed-fields 'Keep metadata.managedFields in printed objects (dropped by default, as kubectl does)'
            cand --show-labels 'Table: a LABELS column with all labels'
            cand --no-headers 'Table and custom-columns: no header line'
            cand --timestamps 'Table: a TIME column with when each delta was printed (UTC, milliseconds)'
            cand --diff 'Show what each Updated/Replaced/Sync delta changed against the previous version kwatch knew: a JSON Patch (`diff`) and `changed` in JSON, `path: old → new` lines in the table and YAML. resourceVersion, managedFields and generation are left out'
            cand --diff-all 'As --diff, including resourceVersion, managedFields and generation'
            cand --insecure-skip-tls-verify 'Do not verify the server''s certificate (insecure; clears the kubeconfig''s CA)'
            cand --no-bookmarks 'Do not ask for bookmarks on watches'
            cand --legacy-sync 'DeltaFIFO only: relists emit Sync instead of Replaced (client-go without EmitDeltaTypeReplaced); refused with a RealFIFO'
            cand --metadata-only 'List and watch metadata only, as client-go''s metadata informer does: objects are PartialObjectMetadata (no spec, data or status; a fraction of the bytes), and the table shows NAME and AGE (with -L and --show-labels)'
            cand --until-synced 'Exit 0 once the initial list has been popped (client-go HasSynced); exit 3 if --timeout comes first'
            cand --watch-only 'Do not print the initial list''s deltas'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand sim 'Run the built-in simulated Kubernetes API server until interrupted'
            cand completions 'Print a shell completion script to stdout'
            cand man 'Print the man page (roff) to stdout'
            cand replay 'Re-render a recording made with --record, in any output format'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'kwatch;sim'= {
            cand --port 'Port to listen on (127.0.0.1); 0 picks a free port'
            cand --write-kubeconfig 'Write a kubeconfig for the simulated cluster to this file (mode 0600)'
            cand --objects 'Number of pods to preload'
            cand --churn 'Changes per second made by the churn generator (0 = none)'
            cand --seed 'Seed of the churn and fault generators'
            cand --scenario 'What the simulated cluster does on its own'
            cand --history 'Number of changes kept in the watch history before the oldest are compacted'
            cand --bookmark-interval 'Seconds between watch bookmarks (a real API server sends one about every minute)'
            cand --pod-size 'Size of the preloaded pods: default (~3.3 KB), small (~1.5 KB), medium (~4.7 KB) or large (~12 KB), for benchmarks'
            cand --cert-shape 'The serving certificate: ca (a CA and a leaf it signed), self-signed (one CA:TRUE certificate, the kubeconfig''s CA), pinned-leaf (a leaf signed by a CA the kubeconfig does not hold, pinned as its CA), ca-true-leaf (a CA:TRUE leaf the CA signed)'
            cand --insecure-http 'Serve plain HTTP instead of HTTPS (kubectl then sends no token)'
            cand --legacy-discovery 'Serve only the legacy discovery documents, as a server without aggregated discovery (before Kubernetes 1.26, or with the feature off) does'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'kwatch;completions'= {
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'kwatch;man'= {
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'kwatch;replay'= {
            cand -o 'Output format: table, wide, json, yaml, name, watch-events (kubectl''s --output-watch-events -o json lines), custom-columns=HEADER:.path,… or jsonpath=TEMPLATE (kubectl''s syntax, applied per delta)'
            cand --output 'Output format: table, wide, json, yaml, name, watch-events (kubectl''s --output-watch-events -o json lines), custom-columns=HEADER:.path,… or jsonpath=TEMPLATE (kubectl''s syntax, applied per delta)'
            cand --color 'When to use colour: auto (a terminal and NO_COLOR unset), always or never'
            cand -L 'Table: a column with the value of each of these labels (comma-separated keys)'
            cand --label-columns 'Table: a column with the value of each of these labels (comma-separated keys)'
            cand --view 'What to print: deltas (what the informer''s queue hands out) or handlers (the OnAdd/OnUpdate/OnDelete calls client-go''s shared informer makes of them, for one handler whose resync period is --resync); handlers with -o table, wide, json or yaml'
            cand --show-managed-fields 'Keep metadata.managedFields in printed objects (dropped by default, as kubectl does)'
            cand --show-labels 'Table: a LABELS column with all labels'
            cand --no-headers 'Table and custom-columns: no header line'
            cand --timestamps 'Table: a TIME column with when each delta was printed (UTC, milliseconds)'
            cand --diff 'Show what each Updated/Replaced/Sync delta changed against the previous version kwatch knew: a JSON Patch (`diff`) and `changed` in JSON, `path: old → new` lines in the table and YAML. resourceVersion, managedFields and generation are left out'
            cand --diff-all 'As --diff, including resourceVersion, managedFields and generation'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'kwatch;help'= {
            cand sim 'Run the built-in simulated Kubernetes API server until interrupted'
            cand completions 'Print a shell completion script to stdout'
            cand man 'Print the man page (roff) to stdout'
            cand replay 'Re-render a recording made with --record, in any output format'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'kwatch;help;sim'= {
        }
        &'kwatch;help;completions'= {
        }
        &'kwatch;help;man'= {
        }
        &'kwatch;help;replay'= {
        }
        &'kwatch;help;help'= {
        }
    ]
    $completions[$command]
}
