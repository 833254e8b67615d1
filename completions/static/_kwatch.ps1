
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'kwatch' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'kwatch'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'kwatch' {
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace to watch (default: the context''s namespace, else "default")')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace to watch (default: the context''s namespace, else "default")')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Watch all namespaces (kubectl''s --all-namespaces[=true|false] too)')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'Watch all namespaces (kubectl''s --all-namespaces[=true|false] too)')
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Label selector (=, ==, !=, in, notin, exists, !key), as kubectl''s -l')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Label selector (=, ==, !=, in, notin, exists, !key), as kubectl''s -l')
            [CompletionResult]::new('--field-selector', '--field-selector', [CompletionResultType]::ParameterName, 'Field selector, e.g. status.phase=Running')
            [CompletionResult]::new('--follow-kinds', '--follow-kinds', [CompletionResultType]::ParameterName, '--follow''s child resources: K,… replaces the defaults, +K adds, -K takes away')
            [CompletionResult]::new('--record', '--record', [CompletionResultType]::ParameterName, 'Also write the records to FILE, or into a database: sqlite:PATH, postgres://…')
            [CompletionResult]::new('--record-buffer', '--record-buffer', [CompletionResultType]::ParameterName, 'With --record URL: memory held for records the database cannot take, then a file')
            [CompletionResult]::new('--timeline', '--timeline', [CompletionResultType]::ParameterName, 'At exit, write what the informers lived through as one HTML page to OUT.html')
            [CompletionResult]::new('--probe', '--probe', [CompletionResultType]::ParameterName, 'Measure write-to-delta latency: patch a ConfigMap of kwatch''s own in NAMESPACE')
            [CompletionResult]::new('--probe-interval', '--probe-interval', [CompletionResultType]::ParameterName, 'How often --probe patches its ConfigMap')
            [CompletionResult]::new('--metrics', '--metrics', [CompletionResultType]::ParameterName, 'Serve the informer''s metrics (OpenMetrics) at http://ADDR/metrics, e.g. 127.0.0.1:9464, localhost:9464 or :9464 (every interface); port 0 picks a free port (the address is printed on stderr)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: table, wide, json, yaml, name, watch-events, custom-columns=…, jsonpath=…')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: table, wide, json, yaml, name, watch-events, custom-columns=…, jsonpath=…')
            [CompletionResult]::new('--live-history', '--live-history', [CompletionResultType]::ParameterName, '--live: how many versions of each object its history screen (Enter) keeps; the oldest go first')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto (a terminal and NO_COLOR unset), always or never')
            [CompletionResult]::new('-L', '-L ', [CompletionResultType]::ParameterName, 'Table: a column with the value of each of these labels (comma-separated keys)')
            [CompletionResult]::new('--label-columns', '--label-columns', [CompletionResultType]::ParameterName, 'Table: a column with the value of each of these labels (comma-separated keys)')
            [CompletionResult]::new('--view', '--view', [CompletionResultType]::ParameterName, 'What to print: deltas, handlers (the OnAdd/OnUpdate/OnDelete calls) or fleet')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Kubeconfig file (default: $KUBECONFIG, which may list several, else ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'Kubeconfig context to use; several, comma-separated, watch each into one stream')
            [CompletionResult]::new('--shard', '--shard', [CompletionResultType]::ParameterName, 'Keep only the contexts of shard I of N (0 ≤ I < N), so that N processes split a fleet')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of each request before its response starts (0 = none), e.g. 10s, 1m')
            [CompletionResult]::new('--cache-dir', '--cache-dir', [CompletionResultType]::ParameterName, 'kubectl''s cache directory, for discovery documents [default: ~/.kube/cache]')
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'The API server''s address, e.g. https://10.0.0.1:6443')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'The API server''s address, e.g. https://10.0.0.1:6443')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'Bearer token (replaces the kubeconfig user''s credentials)')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use instead of the context''s')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use instead of the context''s')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Act as this user: see what that identity''s informer would get, 403s included')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Act as a member of this group (Impersonate-Group; repeat for several)')
            [CompletionResult]::new('--as-uid', '--as-uid', [CompletionResultType]::ParameterName, 'Act with this UID (Impersonate-Uid)')
            [CompletionResult]::new('--certificate-authority', '--certificate-authority', [CompletionResultType]::ParameterName, 'CA certificate file(s) (PEM) to verify the server with (replaces the kubeconfig''s)')
            [CompletionResult]::new('--client-certificate', '--client-certificate', [CompletionResultType]::ParameterName, 'Client certificate file (PEM) for TLS client authentication')
            [CompletionResult]::new('--client-key', '--client-key', [CompletionResultType]::ParameterName, 'Client key file (PEM) for TLS client authentication')
            [CompletionResult]::new('--tls-server-name', '--tls-server-name', [CompletionResultType]::ParameterName, 'Server name to verify the certificate against and send as SNI')
            [CompletionResult]::new('--page-size', '--page-size', [CompletionResultType]::ParameterName, 'Objects per list page, 0 = no paging [default: 500]')
            [CompletionResult]::new('--resync', '--resync', [CompletionResultType]::ParameterName, 'Re-queue every known object as a Sync delta this often (e.g. 30s); off by default')
            [CompletionResult]::new('--fifo', '--fifo', [CompletionResultType]::ParameterName, 'The informer''s queue: delta (DeltaFIFO) or real (RealFIFO)')
            [CompletionResult]::new('--watch-list', '--watch-list', [CompletionResultType]::ParameterName, 'Get the initial state from a streaming list')
            [CompletionResult]::new('--min-watch-timeout', '--min-watch-timeout', [CompletionResultType]::ParameterName, 'Each watch asks the server to end it after a random time in [D, 2·D) (client-go: 5m)')
            [CompletionResult]::new('--pop-delay', '--pop-delay', [CompletionResultType]::ParameterName, 'Spend this long on each pop, as a slow event handler would')
            [CompletionResult]::new('--client-go', '--client-go', [CompletionResultType]::ParameterName, 'The informer of this client-go release: 0.32, 0.33, 0.34, 0.35, 0.36 or 0.37')
            [CompletionResult]::new('--check-consistency', '--check-consistency', [CompletionResultType]::ParameterName, 'Compare the store with a LIST at its resourceVersion every PERIOD (5m)')
            [CompletionResult]::new('--freshness', '--freshness', [CompletionResultType]::ParameterName, 'Sample how far the store is behind the server every PERIOD (1s)')
            [CompletionResult]::new('--stale-after', '--stale-after', [CompletionResultType]::ParameterName, 'With --freshness: a lag this long is a Stale record')
            [CompletionResult]::new('--cache-stats', '--cache-stats', [CompletionResultType]::ParameterName, 'What the informer''s store costs, every PERIOD (30s) and in --stats')
            [CompletionResult]::new('--transform', '--transform', [CompletionResultType]::ParameterName, 'What the cache keeps: strip-managed-fields, strip-last-applied, metadata-only-fields=F,…')
            [CompletionResult]::new('--stall-after', '--stall-after', [CompletionResultType]::ParameterName, 'Report a watch that delivers nothing for D (auto: three bookmark intervals)')
            [CompletionResult]::new('--wire', '--wire', [CompletionResultType]::ParameterName, 'The encoding lists and watches ask for: auto, protobuf or json')
            [CompletionResult]::new('--max-events', '--max-events', [CompletionResultType]::ParameterName, 'Exit 0 after printing this many deltas (0 = no limit)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Stop after this long, connecting included, e.g. 30s (0 = no limit)')
            [CompletionResult]::new('--until', '--until', [CompletionResultType]::ParameterName, 'Exit once a delta meets CONDITION: created, deleted, jsonpath=…, condition=…')
            [CompletionResult]::new('--types', '--types', [CompletionResultType]::ParameterName, 'Print only these delta types: Added,Updated,Deleted,Replaced,Sync,ReplacedAll,SyncAll')
            [CompletionResult]::new('--changes', '--changes', [CompletionResultType]::ParameterName, 'Print an update only when PARTS changed: spec,status,metadata,labels,annotations,data')
            [CompletionResult]::new('-w', '-w', [CompletionResultType]::ParameterName, 'Accepted and ignored, for kubectl''s habit (`kubectl get -w`): kwatch always watches')
            [CompletionResult]::new('--watch', '--watch', [CompletionResultType]::ParameterName, 'Accepted and ignored, for kubectl''s habit (`kubectl get -w`): kwatch always watches')
            [CompletionResult]::new('--follow', '--follow', [CompletionResultType]::ParameterName, 'Also watch what they own, transitively (deploy → rs → pods), live')
            [CompletionResult]::new('--events', '--events', [CompletionResultType]::ParameterName, 'Also show the Events about the objects shown')
            [CompletionResult]::new('--every-resource', '--every-resource', [CompletionResultType]::ParameterName, 'Watch every resource the server can list and watch (events left out)')
            [CompletionResult]::new('--sim', '--sim', [CompletionResultType]::ParameterName, 'Start the built-in simulated cluster in-process and watch it')
            [CompletionResult]::new('--stats', '--stats', [CompletionResultType]::ParameterName, 'On exit, a summary on stderr: deltas, lists, bookmarks, backoffs, time to synced…')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More diagnostics on stderr (-v, -vv, -vvv); RUST_LOG overrides')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More diagnostics on stderr (-v, -vv, -vvv); RUST_LOG overrides')
            [CompletionResult]::new('-i', '-i', [CompletionResultType]::ParameterName, 'A full-screen view on a terminal: the informer''s cache as a table that changes in place, with each object''s history (Enter) and the reflector''s state (? for keys)')
            [CompletionResult]::new('--live', '--live', [CompletionResultType]::ParameterName, 'A full-screen view on a terminal: the informer''s cache as a table that changes in place, with each object''s history (Enter) and the reflector''s state (? for keys)')
            [CompletionResult]::new('--show-managed-fields', '--show-managed-fields', [CompletionResultType]::ParameterName, 'Keep metadata.managedFields in printed objects (dropped by default, as kubectl does)')
            [CompletionResult]::new('--show-labels', '--show-labels', [CompletionResultType]::ParameterName, 'Table: a LABELS column with all labels')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Table and custom-columns: no header line')
            [CompletionResult]::new('--timestamps', '--timestamps', [CompletionResultType]::ParameterName, 'Table: a TIME column with when each delta was printed (UTC, milliseconds)')
            [CompletionResult]::new('--diff', '--diff', [CompletionResultType]::ParameterName, 'Show what each update changed against the version kwatch knew before')
            [CompletionResult]::new('--diff-all', '--diff-all', [CompletionResultType]::ParameterName, 'As --diff, including resourceVersion, managedFields and generation')
            [CompletionResult]::new('--blame', '--blame', [CompletionResultType]::ParameterName, 'Name who made each change: the managedFields entry owning each changed path')
            [CompletionResult]::new('--all-contexts', '--all-contexts', [CompletionResultType]::ParameterName, 'Watch every context of the kubeconfig, into one stream')
            [CompletionResult]::new('--insecure-skip-tls-verify', '--insecure-skip-tls-verify', [CompletionResultType]::ParameterName, 'Do not verify the server''s certificate (insecure; clears the kubeconfig''s CA)')
            [CompletionResult]::new('--disable-compression', '--disable-compression', [CompletionResultType]::ParameterName, 'Do not ask for gzip-compressed responses (as the kubeconfig''s disable-compression)')
            [CompletionResult]::new('--no-bookmarks', '--no-bookmarks', [CompletionResultType]::ParameterName, 'Do not ask for bookmarks on watches')
            [CompletionResult]::new('--legacy-sync', '--legacy-sync', [CompletionResultType]::ParameterName, 'DeltaFIFO only: relists emit Sync instead of Replaced')
            [CompletionResult]::new('--restart-stalled', '--restart-stalled', [CompletionResultType]::ParameterName, 'End a stalled watch (--stall-after) and watch again from its last resourceVersion')
            [CompletionResult]::new('--metadata-only', '--metadata-only', [CompletionResultType]::ParameterName, 'List and watch metadata only, as client-go''s metadata informer does')
            [CompletionResult]::new('--until-synced', '--until-synced', [CompletionResultType]::ParameterName, 'Exit 0 once the initial list has been popped (HasSynced); 3 if --timeout comes first')
            [CompletionResult]::new('--watch-only', '--watch-only', [CompletionResultType]::ParameterName, 'Do not print the initial list''s deltas')
            [CompletionResult]::new('--quiet-relists', '--quiet-relists', [CompletionResultType]::ParameterName, 'Hide a relist''s or resync''s deltas that change nothing; keep its Relisted summary')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('sim', 'sim', [CompletionResultType]::ParameterValue, 'Run the built-in simulated Kubernetes API server until interrupted')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script to stdout')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print the man page (roff) to stdout')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Check how the server lists and watches a resource, as client-go expects')
            [CompletionResult]::new('replay', 'replay', [CompletionResultType]::ParameterValue, 'Re-render a recording made with --record, in any output format')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kwatch;sim' {
            [CompletionResult]::new('--port', '--port', [CompletionResultType]::ParameterName, 'Port to listen on (127.0.0.1); 0 picks a free port')
            [CompletionResult]::new('--clusters', '--clusters', [CompletionResultType]::ParameterName, 'Serve N clusters, each its own server on its own port (from --port on, unless 0), with its own storage, token and control API; the kubeconfig has a context per cluster, kwatch-sim-1 to kwatch-sim-N')
            [CompletionResult]::new('--write-kubeconfig', '--write-kubeconfig', [CompletionResultType]::ParameterName, 'Write a kubeconfig for the simulated cluster to this file (mode 0600)')
            [CompletionResult]::new('--objects', '--objects', [CompletionResultType]::ParameterName, 'Number of pods to preload')
            [CompletionResult]::new('--churn', '--churn', [CompletionResultType]::ParameterName, 'Changes per second made by the churn generator (0 = none)')
            [CompletionResult]::new('--seed', '--seed', [CompletionResultType]::ParameterName, 'Seed of the churn and fault generators')
            [CompletionResult]::new('--scenario', '--scenario', [CompletionResultType]::ParameterName, 'What the simulated cluster does on its own')
            [CompletionResult]::new('--history', '--history', [CompletionResultType]::ParameterName, 'Number of changes kept in the watch history before the oldest are compacted')
            [CompletionResult]::new('--bookmark-interval', '--bookmark-interval', [CompletionResultType]::ParameterName, 'Seconds between watch bookmarks (a real API server sends one about every minute)')
            [CompletionResult]::new('--progress-notify-interval', '--progress-notify-interval', [CompletionResultType]::ParameterName, 'Seconds between etcd''s progress notifications, which bring the watch cache of a quiet resource to the current revision, so that its watches get bookmarks again (etcd''s default: 600)')
            [CompletionResult]::new('--pod-size', '--pod-size', [CompletionResultType]::ParameterName, 'Size of the preloaded pods: default (~3.3 KB), small (~1.5 KB), medium (~4.7 KB), large (~12 KB) or realistic (~9 KB, half of it managedFields), for benchmarks')
            [CompletionResult]::new('--cert-shape', '--cert-shape', [CompletionResultType]::ParameterName, 'The serving certificate: ca (a CA and a leaf it signed), self-signed (one CA:TRUE certificate, the kubeconfig''s CA), pinned-leaf (a leaf signed by a CA the kubeconfig does not hold, pinned as its CA), ca-true-leaf (a CA:TRUE leaf the CA signed)')
            [CompletionResult]::new('--server-version', '--server-version', [CompletionResultType]::ParameterName, 'The Kubernetes version `/version` reports, as MAJOR.MINOR (`1.35`, `1.32+`) [default: the captured kube-apiserver''s, 1.32]; taken as given, to try what a client makes of odd versions')
            [CompletionResult]::new('--bend', '--bend', [CompletionResultType]::ParameterName, 'Bend the list/watch protocol as some servers do, from the start (repeat it or separate modes with commas; `POST /_sim/bend` switches them later)')
            [CompletionResult]::new('--insecure-http', '--insecure-http', [CompletionResultType]::ParameterName, 'Serve plain HTTP instead of HTTPS (kubectl then sends no token)')
            [CompletionResult]::new('--uncompacted', '--uncompacted', [CompletionResultType]::ParameterName, 'Keep revision 1 in reach, as a young etcd before kube-apiserver''s first compaction: a watch or continued list from any old revision is served, not 410 Expired')
            [CompletionResult]::new('--legacy-discovery', '--legacy-discovery', [CompletionResultType]::ParameterName, 'Serve only the legacy discovery documents, as a server without aggregated discovery (before Kubernetes 1.26, or with the feature off) does')
            [CompletionResult]::new('--controllers', '--controllers', [CompletionResultType]::ParameterName, 'Run the controllers kube-controller-manager would: Deployments get ReplicaSets, ReplicaSets and Jobs get pods (which a built-in kubelet runs), deleted owners'' dependents are collected, with the genuine Events. Off: nothing changes objects but churn and clients (`POST /_sim/controllers {"on":true}` switches them later)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kwatch;completions' {
            [CompletionResult]::new('--static', '--static', [CompletionResultType]::ParameterName, 'A script with the flags and fixed value lists only, asking kwatch nothing')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kwatch;man' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'kwatch;check' {
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace to check in (default: the context''s namespace, else "default")')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace to check in (default: the context''s namespace, else "default")')
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Label selector of the lists and watches, as kubectl''s -l')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Label selector of the lists and watches, as kubectl''s -l')
            [CompletionResult]::new('--field-selector', '--field-selector', [CompletionResultType]::ParameterName, 'Field selector of the lists and watches')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'table (for people) or json (one JSON object per check, for scripts)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'table (for people) or json (one JSON object per check, for scripts)')
            [CompletionResult]::new('--write', '--write', [CompletionResultType]::ParameterName, 'Also create, patch and delete a ConfigMap in this namespace, timing each change''s arrival on a watch')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Kubeconfig file (default: $KUBECONFIG, which may list several, else ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'Kubeconfig context to use; several, comma-separated, watch each into one stream')
            [CompletionResult]::new('--shard', '--shard', [CompletionResultType]::ParameterName, 'Keep only the contexts of shard I of N (0 ≤ I < N), so that N processes split a fleet')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of each request before its response starts (0 = none), e.g. 10s, 1m')
            [CompletionResult]::new('--cache-dir', '--cache-dir', [CompletionResultType]::ParameterName, 'kubectl''s cache directory, for discovery documents [default: ~/.kube/cache]')
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'The API server''s address, e.g. https://10.0.0.1:6443')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'The API server''s address, e.g. https://10.0.0.1:6443')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'Bearer token (replaces the kubeconfig user''s credentials)')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use instead of the context''s')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use instead of the context''s')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Act as this user: see what that identity''s informer would get, 403s included')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Act as a member of this group (Impersonate-Group; repeat for several)')
            [CompletionResult]::new('--as-uid', '--as-uid', [CompletionResultType]::ParameterName, 'Act with this UID (Impersonate-Uid)')
            [CompletionResult]::new('--certificate-authority', '--certificate-authority', [CompletionResultType]::ParameterName, 'CA certificate file(s) (PEM) to verify the server with (replaces the kubeconfig''s)')
            [CompletionResult]::new('--client-certificate', '--client-certificate', [CompletionResultType]::ParameterName, 'Client certificate file (PEM) for TLS client authentication')
            [CompletionResult]::new('--client-key', '--client-key', [CompletionResultType]::ParameterName, 'Client key file (PEM) for TLS client authentication')
            [CompletionResult]::new('--tls-server-name', '--tls-server-name', [CompletionResultType]::ParameterName, 'Server name to verify the certificate against and send as SNI')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Check across all namespaces')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'Check across all namespaces')
            [CompletionResult]::new('--sim', '--sim', [CompletionResultType]::ParameterName, 'Check the built-in simulated cluster, started in-process')
            [CompletionResult]::new('--all-contexts', '--all-contexts', [CompletionResultType]::ParameterName, 'Watch every context of the kubeconfig, into one stream')
            [CompletionResult]::new('--insecure-skip-tls-verify', '--insecure-skip-tls-verify', [CompletionResultType]::ParameterName, 'Do not verify the server''s certificate (insecure; clears the kubeconfig''s CA)')
            [CompletionResult]::new('--disable-compression', '--disable-compression', [CompletionResultType]::ParameterName, 'Do not ask for gzip-compressed responses (as the kubeconfig''s disable-compression)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kwatch;replay' {
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Only the recorded objects of this namespace (cluster-scoped ones stay)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Only the recorded objects of this namespace (cluster-scoped ones stay)')
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Only the recorded objects whose labels match (=, ==, !=, in, notin, exists, !key)')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Only the recorded objects whose labels match (=, ==, !=, in, notin, exists, !key)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'Only the records of these contexts (comma-separated); a file recorded from one context names none, and is not filtered')
            [CompletionResult]::new('--since', '--since', [CompletionResultType]::ParameterName, 'Only the records at or after TIME (RFC 3339, e.g. 2026-11-28T03:00:00Z; a time without offset is UTC; 15m is fifteen minutes ago). --diff and --view handlers still know each object as it was before')
            [CompletionResult]::new('--until', '--until', [CompletionResultType]::ParameterName, 'A TIME: only the records at or before it. Else a CONDITION: stop after the record that meets it (as the watch''s --until), exit 0 when met, 4 when the recording ends first')
            [CompletionResult]::new('--at', '--at', [CompletionResultType]::ParameterName, 'Every object''s state at TIME: its last record at or before it, unless that was its deletion (answered from an index in a database)')
            [CompletionResult]::new('--max-events', '--max-events', [CompletionResultType]::ParameterName, 'Stop after printing this many deltas (handler calls with --view handlers)')
            [CompletionResult]::new('--timeline', '--timeline', [CompletionResultType]::ParameterName, 'Draw the recording as one HTML page at OUT.html instead of printing it')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: table, wide, json, yaml, name, watch-events, custom-columns=…, jsonpath=…')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: table, wide, json, yaml, name, watch-events, custom-columns=…, jsonpath=…')
            [CompletionResult]::new('--live-history', '--live-history', [CompletionResultType]::ParameterName, '--live: how many versions of each object its history screen (Enter) keeps; the oldest go first')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto (a terminal and NO_COLOR unset), always or never')
            [CompletionResult]::new('-L', '-L ', [CompletionResultType]::ParameterName, 'Table: a column with the value of each of these labels (comma-separated keys)')
            [CompletionResult]::new('--label-columns', '--label-columns', [CompletionResultType]::ParameterName, 'Table: a column with the value of each of these labels (comma-separated keys)')
            [CompletionResult]::new('--view', '--view', [CompletionResultType]::ParameterName, 'What to print: deltas, handlers (the OnAdd/OnUpdate/OnDelete calls) or fleet')
            [CompletionResult]::new('--types', '--types', [CompletionResultType]::ParameterName, 'Print only these delta types: Added,Updated,Deleted,Replaced,Sync,ReplacedAll,SyncAll')
            [CompletionResult]::new('--changes', '--changes', [CompletionResultType]::ParameterName, 'Print an update only when PARTS changed: spec,status,metadata,labels,annotations,data')
            [CompletionResult]::new('--explain', '--explain', [CompletionResultType]::ParameterName, 'With a database and --at: its query plan on stderr first (EXPLAIN), to see that it reads the index (the tests and the benchmark)')
            [CompletionResult]::new('--stats', '--stats', [CompletionResultType]::ParameterName, 'At the end, the summary of the records replayed on stderr (as the watch''s --stats)')
            [CompletionResult]::new('--watch-only', '--watch-only', [CompletionResultType]::ParameterName, 'Do not print the recorded initial lists'' deltas (as the watch''s --watch-only)')
            [CompletionResult]::new('-i', '-i', [CompletionResultType]::ParameterName, 'A full-screen view on a terminal: the informer''s cache as a table that changes in place, with each object''s history (Enter) and the reflector''s state (? for keys)')
            [CompletionResult]::new('--live', '--live', [CompletionResultType]::ParameterName, 'A full-screen view on a terminal: the informer''s cache as a table that changes in place, with each object''s history (Enter) and the reflector''s state (? for keys)')
            [CompletionResult]::new('--show-managed-fields', '--show-managed-fields', [CompletionResultType]::ParameterName, 'Keep metadata.managedFields in printed objects (dropped by default, as kubectl does)')
            [CompletionResult]::new('--show-labels', '--show-labels', [CompletionResultType]::ParameterName, 'Table: a LABELS column with all labels')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Table and custom-columns: no header line')
            [CompletionResult]::new('--timestamps', '--timestamps', [CompletionResultType]::ParameterName, 'Table: a TIME column with when each delta was printed (UTC, milliseconds)')
            [CompletionResult]::new('--diff', '--diff', [CompletionResultType]::ParameterName, 'Show what each update changed against the version kwatch knew before')
            [CompletionResult]::new('--diff-all', '--diff-all', [CompletionResultType]::ParameterName, 'As --diff, including resourceVersion, managedFields and generation')
            [CompletionResult]::new('--blame', '--blame', [CompletionResultType]::ParameterName, 'Name who made each change: the managedFields entry owning each changed path')
            [CompletionResult]::new('--quiet-relists', '--quiet-relists', [CompletionResultType]::ParameterName, 'Hide a relist''s or resync''s deltas that change nothing; keep its Relisted summary')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kwatch;help' {
            [CompletionResult]::new('sim', 'sim', [CompletionResultType]::ParameterValue, 'Run the built-in simulated Kubernetes API server until interrupted')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script to stdout')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print the man page (roff) to stdout')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Check how the server lists and watches a resource, as client-go expects')
            [CompletionResult]::new('replay', 'replay', [CompletionResultType]::ParameterValue, 'Re-render a recording made with --record, in any output format')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kwatch;help;sim' {
            break
        }
        'kwatch;help;completions' {
            break
        }
        'kwatch;help;man' {
            break
        }
        'kwatch;help;check' {
            break
        }
        'kwatch;help;replay' {
            break
        }
        'kwatch;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
