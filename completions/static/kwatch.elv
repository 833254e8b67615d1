
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
            cand -A 'Watch all namespaces (kubectl''s --all-namespaces[=true|false] too)'
            cand --all-namespaces 'Watch all namespaces (kubectl''s --all-namespaces[=true|false] too)'
            cand -l 'Label selector (=, ==, !=, in, notin, exists, !key), as kubectl''s -l'
            cand --selector 'Label selector (=, ==, !=, in, notin, exists, !key), as kubectl''s -l'
            cand --field-selector 'Field selector, e.g. status.phase=Running'
            cand --follow-kinds '--follow''s child resources: K,… replaces the defaults, +K adds, -K takes away'
            cand --record 'Also write the JSON-lines records to FILE; replay it with `kwatch replay FILE`'
            cand --timeline 'At exit, write what the informers lived through as one HTML page to OUT.html'
            cand --probe 'Measure write-to-delta latency: patch a ConfigMap of kwatch''s own in NAMESPACE'
            cand --probe-interval 'How often --probe patches its ConfigMap'
            cand --metrics 'Serve the informer''s metrics (OpenMetrics) at http://ADDR/metrics, e.g. 127.0.0.1:9464, localhost:9464 or :9464 (every interface); port 0 picks a free port (the address is printed on stderr)'
            cand -o 'Output format: table, wide, json, yaml, name, watch-events, custom-columns=…, jsonpath=…'
            cand --output 'Output format: table, wide, json, yaml, name, watch-events, custom-columns=…, jsonpath=…'
            cand --live-history '--live: how many versions of each object its history screen (Enter) keeps; the oldest go first'
            cand --color 'When to use colour: auto (a terminal and NO_COLOR unset), always or never'
            cand -L 'Table: a column with the value of each of these labels (comma-separated keys)'
            cand --label-columns 'Table: a column with the value of each of these labels (comma-separated keys)'
            cand --view 'What to print: deltas, handlers (the OnAdd/OnUpdate/OnDelete calls) or fleet'
            cand --kubeconfig 'Kubeconfig file (default: $KUBECONFIG, which may list several, else ~/.kube/config)'
            cand --context 'Kubeconfig context to use; several, comma-separated, watch each into one stream'
            cand --request-timeout 'Timeout of each request before its response starts (0 = none), e.g. 10s, 1m'
            cand --cache-dir 'kubectl''s cache directory, for discovery documents [default: ~/.kube/cache]'
            cand -s 'The API server''s address, e.g. https://10.0.0.1:6443'
            cand --server 'The API server''s address, e.g. https://10.0.0.1:6443'
            cand --token 'Bearer token (replaces the kubeconfig user''s credentials)'
            cand --user 'The kubeconfig user to use instead of the context''s'
            cand --cluster 'The kubeconfig cluster to use instead of the context''s'
            cand --as 'Act as this user: see what that identity''s informer would get, 403s included'
            cand --as-group 'Act as a member of this group (Impersonate-Group; repeat for several)'
            cand --as-uid 'Act with this UID (Impersonate-Uid)'
            cand --certificate-authority 'CA certificate file(s) (PEM) to verify the server with (replaces the kubeconfig''s)'
            cand --client-certificate 'Client certificate file (PEM) for TLS client authentication'
            cand --client-key 'Client key file (PEM) for TLS client authentication'
            cand --tls-server-name 'Server name to verify the certificate against and send as SNI'
            cand --page-size 'Objects per list page, 0 = no paging [default: 500]'
            cand --resync 'Re-queue every known object as a Sync delta this often (e.g. 30s); off by default'
            cand --fifo 'The informer''s queue: delta (DeltaFIFO) or real (RealFIFO)'
            cand --watch-list 'Get the initial state from a streaming list'
            cand --min-watch-timeout 'Each watch asks the server to end it after a random time in [D, 2·D) (client-go: 5m)'
            cand --pop-delay 'Spend this long on each pop, as a slow event handler would'
            cand --client-go 'The informer of this client-go release: 0.32, 0.33, 0.34, 0.35, 0.36 or 0.37'
            cand --check-consistency 'Compare the store with a LIST at its resourceVersion every PERIOD (5m)'
            cand --freshness 'Sample how far the store is behind the server every PERIOD (1s)'
            cand --stale-after 'With --freshness: a lag this long is a Stale record'
            cand --cache-stats 'What the informer''s store costs, every PERIOD (30s) and in --stats'
            cand --transform 'What the cache keeps: strip-managed-fields, strip-last-applied, metadata-only-fields=F,…'
            cand --stall-after 'Report a watch that delivers nothing for D (auto: three bookmark intervals)'
            cand --wire 'The encoding lists and watches ask for: auto, protobuf or json'
            cand --max-events 'Exit 0 after printing this many deltas (0 = no limit)'
            cand --timeout 'Stop after this long, connecting included, e.g. 30s (0 = no limit)'
            cand --until 'Exit once a delta meets CONDITION: created, deleted, jsonpath=…, condition=…'
            cand --types 'Print only these delta types: Added,Updated,Deleted,Replaced,Sync,ReplacedAll,SyncAll'
            cand --changes 'Print an update only when PARTS changed: spec,status,metadata,labels,annotations,data'
            cand -w 'Accepted and ignored, for kubectl''s habit (`kubectl get -w`): kwatch always watches'
            cand --watch 'Accepted and ignored, for kubectl''s habit (`kubectl get -w`): kwatch always watches'
            cand --follow 'Also watch what they own, transitively (deploy → rs → pods), live'
            cand --events 'Also show the Events about the objects shown'
            cand --every-resource 'Watch every resource the server can list and watch (events left out)'
            cand --sim 'Start the built-in simulated cluster in-process and watch it'
            cand --stats 'On exit, a summary on stderr: deltas, lists, bookmarks, backoffs, time to synced…'
            cand -v 'More diagnostics on stderr (-v, -vv, -vvv); RUST_LOG overrides'
            cand --verbose 'More diagnostics on stderr (-v, -vv, -vvv); RUST_LOG overrides'
            cand -i 'A full-screen view on a terminal: the informer''s cache as a table that changes in place, with each object''s history (Enter) and the reflector''s state (? for keys)'
            cand --live 'A full-screen view on a terminal: the informer''s cache as a table that changes in place, with each object''s history (Enter) and the reflector''s state (? for keys)'
            cand --show-managed-fields 'Keep metadata.managedFields in printed objects (dropped by default, as kubectl does)'
            cand --show-labels 'Table: a LABELS column with all labels'
            cand --no-headers 'Table and custom-columns: no header line'
            cand --timestamps 'Table: a TIME column with when each delta was printed (UTC, milliseconds)'
            cand --diff 'Show what each update changed against the version kwatch knew before'
            cand --diff-all 'As --diff, including resourceVersion, managedFields and generation'
            cand --blame 'Name who made each change: the managedFields entry owning each changed path'
            cand --all-contexts 'Watch every context of the kubeconfig, into one stream'
            cand --insecure-skip-tls-verify 'Do not verify the server''s certificate (insecure; clears the kubeconfig''s CA)'
            cand --disable-compression 'Do not ask for gzip-compressed responses (as the kubeconfig''s disable-compression)'
            cand --no-bookmarks 'Do not ask for bookmarks on watches'
            cand --legacy-sync 'DeltaFIFO only: relists emit Sync instead of Replaced'
            cand --restart-stalled 'End a stalled watch (--stall-after) and watch again from its last resourceVersion'
            cand --metadata-only 'List and watch metadata only, as client-go''s metadata informer does'
            cand --until-synced 'Exit 0 once the initial list has been popped (HasSynced); 3 if --timeout comes first'
            cand --watch-only 'Do not print the initial list''s deltas'
            cand --quiet-relists 'Hide a relist''s or resync''s deltas that change nothing; keep its Relisted summary'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand sim 'Run the built-in simulated Kubernetes API server until interrupted'
            cand completions 'Print a shell completion script to stdout'
            cand man 'Print the man page (roff) to stdout'
            cand check 'Check how the server lists and watches a resource, as client-go expects'
            cand replay 'Re-render a recording made with --record, in any output format'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'kwatch;sim'= {
            cand --port 'Port to listen on (127.0.0.1); 0 picks a free port'
            cand --clusters 'Serve N clusters, each its own server on its own port (from --port on, unless 0), with its own storage, token and control API; the kubeconfig has a context per cluster, kwatch-sim-1 to kwatch-sim-N'
            cand --write-kubeconfig 'Write a kubeconfig for the simulated cluster to this file (mode 0600)'
            cand --objects 'Number of pods to preload'
            cand --churn 'Changes per second made by the churn generator (0 = none)'
            cand --seed 'Seed of the churn and fault generators'
            cand --scenario 'What the simulated cluster does on its own'
            cand --history 'Number of changes kept in the watch history before the oldest are compacted'
            cand --bookmark-interval 'Seconds between watch bookmarks (a real API server sends one about every minute)'
            cand --progress-notify-interval 'Seconds between etcd''s progress notifications, which bring the watch cache of a quiet resource to the current revision, so that its watches get bookmarks again (etcd''s default: 600)'
            cand --pod-size 'Size of the preloaded pods: default (~3.3 KB), small (~1.5 KB), medium (~4.7 KB), large (~12 KB) or realistic (~9 KB, half of it managedFields), for benchmarks'
            cand --cert-shape 'The serving certificate: ca (a CA and a leaf it signed), self-signed (one CA:TRUE certificate, the kubeconfig''s CA), pinned-leaf (a leaf signed by a CA the kubeconfig does not hold, pinned as its CA), ca-true-leaf (a CA:TRUE leaf the CA signed)'
            cand --server-version 'The Kubernetes version `/version` reports, as MAJOR.MINOR (`1.35`, `1.32+`) [default: the captured kube-apiserver''s, 1.32]; taken as given, to try what a client makes of odd versions'
            cand --bend 'Bend the list/watch protocol as some servers do, from the start (repeat it or separate modes with commas; `POST /_sim/bend` switches them later)'
            cand --insecure-http 'Serve plain HTTP instead of HTTPS (kubectl then sends no token)'
            cand --uncompacted 'Keep revision 1 in reach, as a young etcd before kube-apiserver''s first compaction: a watch or continued list from any old revision is served, not 410 Expired'
            cand --legacy-discovery 'Serve only the legacy discovery documents, as a server without aggregated discovery (before Kubernetes 1.26, or with the feature off) does'
            cand --controllers 'Run the controllers kube-controller-manager would: Deployments get ReplicaSets, ReplicaSets and Jobs get pods (which a built-in kubelet runs), deleted owners'' dependents are collected, with the genuine Events. Off: nothing changes objects but churn and clients (`POST /_sim/controllers {"on":true}` switches them later)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'kwatch;completions'= {
            cand --static 'A script with the flags and fixed value lists only, asking kwatch nothing'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'kwatch;man'= {
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'kwatch;check'= {
            cand -n 'Namespace to check in (default: the context''s namespace, else "default")'
            cand --namespace 'Namespace to check in (default: the context''s namespace, else "default")'
            cand -l 'Label selector of the lists and watches, as kubectl''s -l'
            cand --selector 'Label selector of the lists and watches, as kubectl''s -l'
            cand --field-selector 'Field selector of the lists and watches'
            cand -o 'table (for people) or json (one JSON object per check, for scripts)'
            cand --output 'table (for people) or json (one JSON object per check, for scripts)'
            cand --write 'Also create, patch and delete a ConfigMap in this namespace, timing each change''s arrival on a watch'
            cand --kubeconfig 'Kubeconfig file (default: $KUBECONFIG, which may list several, else ~/.kube/config)'
            cand --context 'Kubeconfig context to use; several, comma-separated, watch each into one stream'
            cand --request-timeout 'Timeout of each request before its response starts (0 = none), e.g. 10s, 1m'
            cand --cache-dir 'kubectl''s cache directory, for discovery documents [default: ~/.kube/cache]'
            cand -s 'The API server''s address, e.g. https://10.0.0.1:6443'
            cand --server 'The API server''s address, e.g. https://10.0.0.1:6443'
            cand --token 'Bearer token (replaces the kubeconfig user''s credentials)'
            cand --user 'The kubeconfig user to use instead of the context''s'
            cand --cluster 'The kubeconfig cluster to use instead of the context''s'
            cand --as 'Act as this user: see what that identity''s informer would get, 403s included'
            cand --as-group 'Act as a member of this group (Impersonate-Group; repeat for several)'
            cand --as-uid 'Act with this UID (Impersonate-Uid)'
            cand --certificate-authority 'CA certificate file(s) (PEM) to verify the server with (replaces the kubeconfig''s)'
            cand --client-certificate 'Client certificate file (PEM) for TLS client authentication'
            cand --client-key 'Client key file (PEM) for TLS client authentication'
            cand --tls-server-name 'Server name to verify the certificate against and send as SNI'
            cand -A 'Check across all namespaces'
            cand --all-namespaces 'Check across all namespaces'
            cand --sim 'Check the built-in simulated cluster, started in-process'
            cand --all-contexts 'Watch every context of the kubeconfig, into one stream'
            cand --insecure-skip-tls-verify 'Do not verify the server''s certificate (insecure; clears the kubeconfig''s CA)'
            cand --disable-compression 'Do not ask for gzip-compressed responses (as the kubeconfig''s disable-compression)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'kwatch;replay'= {
            cand -n 'Only the recorded objects of this namespace (cluster-scoped ones stay)'
            cand --namespace 'Only the recorded objects of this namespace (cluster-scoped ones stay)'
            cand -l 'Only the recorded objects whose labels match (=, ==, !=, in, notin, exists, !key)'
            cand --selector 'Only the recorded objects whose labels match (=, ==, !=, in, notin, exists, !key)'
            cand --max-events 'Stop after printing this many deltas (handler calls with --view handlers)'
            cand --until 'Stop after the record that meets CONDITION (as the watch''s --until): exit 0 when met, 4 when the recording ends first'
            cand --timeline 'Draw the recording as one HTML page at OUT.html instead of printing it'
            cand -o 'Output format: table, wide, json, yaml, name, watch-events, custom-columns=…, jsonpath=…'
            cand --output 'Output format: table, wide, json, yaml, name, watch-events, custom-columns=…, jsonpath=…'
            cand --live-history '--live: how many versions of each object its history screen (Enter) keeps; the oldest go first'
            cand --color 'When to use colour: auto (a terminal and NO_COLOR unset), always or never'
            cand -L 'Table: a column with the value of each of these labels (comma-separated keys)'
            cand --label-columns 'Table: a column with the value of each of these labels (comma-separated keys)'
            cand --view 'What to print: deltas, handlers (the OnAdd/OnUpdate/OnDelete calls) or fleet'
            cand --types 'Print only these delta types: Added,Updated,Deleted,Replaced,Sync,ReplacedAll,SyncAll'
            cand --changes 'Print an update only when PARTS changed: spec,status,metadata,labels,annotations,data'
            cand --stats 'At the end, the summary of the records replayed on stderr (as the watch''s --stats)'
            cand --watch-only 'Do not print the recorded initial lists'' deltas (as the watch''s --watch-only)'
            cand -i 'A full-screen view on a terminal: the informer''s cache as a table that changes in place, with each object''s history (Enter) and the reflector''s state (? for keys)'
            cand --live 'A full-screen view on a terminal: the informer''s cache as a table that changes in place, with each object''s history (Enter) and the reflector''s state (? for keys)'
            cand --show-managed-fields 'Keep metadata.managedFields in printed objects (dropped by default, as kubectl does)'
            cand --show-labels 'Table: a LABELS column with all labels'
            cand --no-headers 'Table and custom-columns: no header line'
            cand --timestamps 'Table: a TIME column with when each delta was printed (UTC, milliseconds)'
            cand --diff 'Show what each update changed against the version kwatch knew before'
            cand --diff-all 'As --diff, including resourceVersion, managedFields and generation'
            cand --blame 'Name who made each change: the managedFields entry owning each changed path'
            cand --quiet-relists 'Hide a relist''s or resync''s deltas that change nothing; keep its Relisted summary'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'kwatch;help'= {
            cand sim 'Run the built-in simulated Kubernetes API server until interrupted'
            cand completions 'Print a shell completion script to stdout'
            cand man 'Print the man page (roff) to stdout'
            cand check 'Check how the server lists and watches a resource, as client-go expects'
            cand replay 'Re-render a recording made with --record, in any output format'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'kwatch;help;sim'= {
        }
        &'kwatch;help;completions'= {
        }
        &'kwatch;help;man'= {
        }
        &'kwatch;help;check'= {
        }
        &'kwatch;help;replay'= {
        }
        &'kwatch;help;help'= {
        }
    ]
    $completions[$command]
}
