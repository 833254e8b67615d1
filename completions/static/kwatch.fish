# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_kwatch_global_optspecs
    string join \n n/namespace= A/all-namespaces= w/watch l/selector= field-selector= follow follow-kinds= events every-resource sim record= record-buffer= timeline= stats probe= probe-interval= metrics= v/verbose o/output= i/live live-history= show-managed-fields color= L/label-columns= show-labels no-headers timestamps diff diff-all blame view= kubeconfig= context= all-contexts shard= request-timeout= cache-dir= s/server= token= user= cluster= as= as-group= as-uid= insecure-skip-tls-verify certificate-authority= client-certificate= client-key= tls-server-name= disable-compression page-size= resync= no-bookmarks legacy-sync fifo= watch-list= min-watch-timeout= pop-delay= client-go= check-consistency= freshness= stale-after= cache-stats= transform= stall-after= restart-stalled wire= metadata-only max-events= timeout= until-synced watch-only until= quiet-relists types= changes= h/help V/version
end

function __fish_kwatch_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_kwatch_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_kwatch_using_subcommand
    set -l cmd (__fish_kwatch_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c kwatch -n "__fish_kwatch_needs_command" -s n -l namespace -d 'Namespace to watch (default: the context\'s namespace, else "default")' -r -f
complete -c kwatch -n "__fish_kwatch_needs_command" -s A -l all-namespaces -d 'Watch all namespaces (kubectl\'s --all-namespaces[=true|false] too)' -r -f -a "true\t''
false\t''"
complete -c kwatch -n "__fish_kwatch_needs_command" -s l -l selector -d 'Label selector (=, ==, !=, in, notin, exists, !key), as kubectl\'s -l' -r -f
complete -c kwatch -n "__fish_kwatch_needs_command" -l field-selector -d 'Field selector, e.g. status.phase=Running' -r
complete -c kwatch -n "__fish_kwatch_needs_command" -l follow-kinds -d '--follow\'s child resources: K,… replaces the defaults, +K adds, -K takes away' -r
complete -c kwatch -n "__fish_kwatch_needs_command" -l record -d 'Also write the records to FILE, or into a database: sqlite:PATH, postgres://…' -r -F
complete -c kwatch -n "__fish_kwatch_needs_command" -l record-buffer -d 'With --record URL: memory held for records the database cannot take, then a file' -r
complete -c kwatch -n "__fish_kwatch_needs_command" -l timeline -d 'At exit, write what the informers lived through as one HTML page to OUT.html' -r -F
complete -c kwatch -n "__fish_kwatch_needs_command" -l probe -d 'Measure write-to-delta latency: patch a ConfigMap of kwatch\'s own in NAMESPACE' -r
complete -c kwatch -n "__fish_kwatch_needs_command" -l probe-interval -d 'How often --probe patches its ConfigMap' -r
complete -c kwatch -n "__fish_kwatch_needs_command" -l metrics -d 'Serve the informer\'s metrics (OpenMetrics) at http://ADDR/metrics, e.g. 127.0.0.1:9464, localhost:9464 or :9464 (every interface); port 0 picks a free port (the address is printed on stderr)' -r
complete -c kwatch -n "__fish_kwatch_needs_command" -s o -l output -d 'Output format: table, wide, json, yaml, name, watch-events, custom-columns=…, jsonpath=…' -r -f -a "table\t''
wide\t''
json\t''
yaml\t''
name\t''
watch-events\t''
custom-columns=\t''
jsonpath=\t''"
complete -c kwatch -n "__fish_kwatch_needs_command" -l live-history -d '--live: how many versions of each object its history screen (Enter) keeps; the oldest go first' -r
complete -c kwatch -n "__fish_kwatch_needs_command" -l color -d 'When to use colour: auto (a terminal and NO_COLOR unset), always or never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kwatch -n "__fish_kwatch_needs_command" -s L -l label-columns -d 'Table: a column with the value of each of these labels (comma-separated keys)' -r
complete -c kwatch -n "__fish_kwatch_needs_command" -l view -d 'What to print: deltas, handlers (the OnAdd/OnUpdate/OnDelete calls) or fleet' -r -f -a "deltas\t''
handlers\t''
fleet\t''"
complete -c kwatch -n "__fish_kwatch_needs_command" -l kubeconfig -d 'Kubeconfig file (default: $KUBECONFIG, which may list several, else ~/.kube/config)' -r -F
complete -c kwatch -n "__fish_kwatch_needs_command" -l context -d 'Kubeconfig context to use; several, comma-separated, watch each into one stream' -r -f
complete -c kwatch -n "__fish_kwatch_needs_command" -l shard -d 'Keep only the contexts of shard I of N (0 ≤ I < N), so that N processes split a fleet' -r
complete -c kwatch -n "__fish_kwatch_needs_command" -l request-timeout -d 'Timeout of each request before its response starts (0 = none), e.g. 10s, 1m' -r
complete -c kwatch -n "__fish_kwatch_needs_command" -l cache-dir -d 'kubectl\'s cache directory, for discovery documents [default: ~/.kube/cache]' -r -F
complete -c kwatch -n "__fish_kwatch_needs_command" -s s -l server -d 'The API server\'s address, e.g. https://10.0.0.1:6443' -r
complete -c kwatch -n "__fish_kwatch_needs_command" -l token -d 'Bearer token (replaces the kubeconfig user\'s credentials)' -r
complete -c kwatch -n "__fish_kwatch_needs_command" -l user -d 'The kubeconfig user to use instead of the context\'s' -r
complete -c kwatch -n "__fish_kwatch_needs_command" -l cluster -d 'The kubeconfig cluster to use instead of the context\'s' -r
complete -c kwatch -n "__fish_kwatch_needs_command" -l as -d 'Act as this user: see what that identity\'s informer would get, 403s included' -r
complete -c kwatch -n "__fish_kwatch_needs_command" -l as-group -d 'Act as a member of this group (Impersonate-Group; repeat for several)' -r
complete -c kwatch -n "__fish_kwatch_needs_command" -l as-uid -d 'Act with this UID (Impersonate-Uid)' -r
complete -c kwatch -n "__fish_kwatch_needs_command" -l certificate-authority -d 'CA certificate file(s) (PEM) to verify the server with (replaces the kubeconfig\'s)' -r -F
complete -c kwatch -n "__fish_kwatch_needs_command" -l client-certificate -d 'Client certificate file (PEM) for TLS client authentication' -r -F
complete -c kwatch -n "__fish_kwatch_needs_command" -l client-key -d 'Client key file (PEM) for TLS client authentication' -r -F
complete -c kwatch -n "__fish_kwatch_needs_command" -l tls-server-name -d 'Server name to verify the certificate against and send as SNI' -r
complete -c kwatch -n "__fish_kwatch_needs_command" -l page-size -d 'Objects per list page, 0 = no paging [default: 500]' -r
complete -c kwatch -n "__fish_kwatch_needs_command" -l resync -d 'Re-queue every known object as a Sync delta this often (e.g. 30s); off by default' -r
complete -c kwatch -n "__fish_kwatch_needs_command" -l fifo -d 'The informer\'s queue: delta (DeltaFIFO) or real (RealFIFO)' -r -f -a "delta\t''
real\t''"
complete -c kwatch -n "__fish_kwatch_needs_command" -l watch-list -d 'Get the initial state from a streaming list' -r -f -a "auto\t'Try it; if the server rejects it, LIST from then on'
on\t'Always try it first (falling back to LIST for an attempt it fails)'
off\t'Always LIST'"
complete -c kwatch -n "__fish_kwatch_needs_command" -l min-watch-timeout -d 'Each watch asks the server to end it after a random time in [D, 2·D) (client-go: 5m)' -r
complete -c kwatch -n "__fish_kwatch_needs_command" -l pop-delay -d 'Spend this long on each pop, as a slow event handler would' -r
complete -c kwatch -n "__fish_kwatch_needs_command" -l client-go -d 'The informer of this client-go release: 0.32, 0.33, 0.34, 0.35, 0.36 or 0.37' -r -f -a "0.32\t''
0.33\t''
0.34\t''
0.35\t''
0.36\t''
0.37\t''"
complete -c kwatch -n "__fish_kwatch_needs_command" -l check-consistency -d 'Compare the store with a LIST at its resourceVersion every PERIOD (5m)' -r
complete -c kwatch -n "__fish_kwatch_needs_command" -l freshness -d 'Sample how far the store is behind the server every PERIOD (1s)' -r
complete -c kwatch -n "__fish_kwatch_needs_command" -l stale-after -d 'With --freshness: a lag this long is a Stale record' -r
complete -c kwatch -n "__fish_kwatch_needs_command" -l cache-stats -d 'What the informer\'s store costs, every PERIOD (30s) and in --stats' -r
complete -c kwatch -n "__fish_kwatch_needs_command" -l transform -d 'What the cache keeps: strip-managed-fields, strip-last-applied, metadata-only-fields=F,…' -r -f -a "strip-managed-fields\t''
strip-last-applied\t''
metadata-only-fields=\t''"
complete -c kwatch -n "__fish_kwatch_needs_command" -l stall-after -d 'Report a watch that delivers nothing for D (auto: three bookmark intervals)' -r
complete -c kwatch -n "__fish_kwatch_needs_command" -l wire -d 'The encoding lists and watches ask for: auto, protobuf or json' -r -f -a "auto\t'Protobuf for built-in types (kube-controller-manager\'s choice), JSON for the rest'
protobuf\t'As `auto`: custom resources and the server\'s Tables have no protobuf to ask for'
json\t''"
complete -c kwatch -n "__fish_kwatch_needs_command" -l max-events -d 'Exit 0 after printing this many deltas (0 = no limit)' -r
complete -c kwatch -n "__fish_kwatch_needs_command" -l timeout -d 'Stop after this long, connecting included, e.g. 30s (0 = no limit)' -r
complete -c kwatch -n "__fish_kwatch_needs_command" -l until -d 'Exit once a delta meets CONDITION: created, deleted, jsonpath=…, condition=…' -r
complete -c kwatch -n "__fish_kwatch_needs_command" -l types -d 'Print only these delta types: Added,Updated,Deleted,Replaced,Sync,ReplacedAll,SyncAll' -r -f -a "Added\t''
Updated\t''
Deleted\t''
Replaced\t''
Sync\t''
ReplacedAll\t''
SyncAll\t''"
complete -c kwatch -n "__fish_kwatch_needs_command" -l changes -d 'Print an update only when PARTS changed: spec,status,metadata,labels,annotations,data' -r -f -a "spec\t''
status\t''
metadata\t''
labels\t''
annotations\t''
data\t''"
complete -c kwatch -n "__fish_kwatch_needs_command" -s w -l watch -d 'Accepted and ignored, for kubectl\'s habit (`kubectl get -w`): kwatch always watches'
complete -c kwatch -n "__fish_kwatch_needs_command" -l follow -d 'Also watch what they own, transitively (deploy → rs → pods), live'
complete -c kwatch -n "__fish_kwatch_needs_command" -l events -d 'Also show the Events about the objects shown'
complete -c kwatch -n "__fish_kwatch_needs_command" -l every-resource -d 'Watch every resource the server can list and watch (events left out)'
complete -c kwatch -n "__fish_kwatch_needs_command" -l sim -d 'Start the built-in simulated cluster in-process and watch it'
complete -c kwatch -n "__fish_kwatch_needs_command" -l stats -d 'On exit, a summary on stderr: deltas, lists, bookmarks, backoffs, time to synced…'
complete -c kwatch -n "__fish_kwatch_needs_command" -s v -l verbose -d 'More diagnostics on stderr (-v, -vv, -vvv); RUST_LOG overrides'
complete -c kwatch -n "__fish_kwatch_needs_command" -s i -l live -d 'A full-screen view on a terminal: the informer\'s cache as a table that changes in place, with each object\'s history (Enter) and the reflector\'s state (? for keys)'
complete -c kwatch -n "__fish_kwatch_needs_command" -l show-managed-fields -d 'Keep metadata.managedFields in printed objects (dropped by default, as kubectl does)'
complete -c kwatch -n "__fish_kwatch_needs_command" -l show-labels -d 'Table: a LABELS column with all labels'
complete -c kwatch -n "__fish_kwatch_needs_command" -l no-headers -d 'Table and custom-columns: no header line'
complete -c kwatch -n "__fish_kwatch_needs_command" -l timestamps -d 'Table: a TIME column with when each delta was printed (UTC, milliseconds)'
complete -c kwatch -n "__fish_kwatch_needs_command" -l diff -d 'Show what each update changed against the version kwatch knew before'
complete -c kwatch -n "__fish_kwatch_needs_command" -l diff-all -d 'As --diff, including resourceVersion, managedFields and generation'
complete -c kwatch -n "__fish_kwatch_needs_command" -l blame -d 'Name who made each change: the managedFields entry owning each changed path'
complete -c kwatch -n "__fish_kwatch_needs_command" -l all-contexts -d 'Watch every context of the kubeconfig, into one stream'
complete -c kwatch -n "__fish_kwatch_needs_command" -l insecure-skip-tls-verify -d 'Do not verify the server\'s certificate (insecure; clears the kubeconfig\'s CA)'
complete -c kwatch -n "__fish_kwatch_needs_command" -l disable-compression -d 'Do not ask for gzip-compressed responses (as the kubeconfig\'s disable-compression)'
complete -c kwatch -n "__fish_kwatch_needs_command" -l no-bookmarks -d 'Do not ask for bookmarks on watches'
complete -c kwatch -n "__fish_kwatch_needs_command" -l legacy-sync -d 'DeltaFIFO only: relists emit Sync instead of Replaced'
complete -c kwatch -n "__fish_kwatch_needs_command" -l restart-stalled -d 'End a stalled watch (--stall-after) and watch again from its last resourceVersion'
complete -c kwatch -n "__fish_kwatch_needs_command" -l metadata-only -d 'List and watch metadata only, as client-go\'s metadata informer does'
complete -c kwatch -n "__fish_kwatch_needs_command" -l until-synced -d 'Exit 0 once the initial list has been popped (HasSynced); 3 if --timeout comes first'
complete -c kwatch -n "__fish_kwatch_needs_command" -l watch-only -d 'Do not print the initial list\'s deltas'
complete -c kwatch -n "__fish_kwatch_needs_command" -l quiet-relists -d 'Hide a relist\'s or resync\'s deltas that change nothing; keep its Relisted summary'
complete -c kwatch -n "__fish_kwatch_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kwatch -n "__fish_kwatch_needs_command" -s V -l version -d 'Print version'
complete -c kwatch -n "__fish_kwatch_needs_command" -a "sim" -d 'Run the built-in simulated Kubernetes API server until interrupted'
complete -c kwatch -n "__fish_kwatch_needs_command" -a "completions" -d 'Print a shell completion script to stdout'
complete -c kwatch -n "__fish_kwatch_needs_command" -a "man" -d 'Print the man page (roff) to stdout'
complete -c kwatch -n "__fish_kwatch_needs_command" -a "check" -d 'Check how the server lists and watches a resource, as client-go expects'
complete -c kwatch -n "__fish_kwatch_needs_command" -a "replay" -d 'Re-render a recording made with --record, in any output format'
complete -c kwatch -n "__fish_kwatch_needs_command" -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kwatch -n "__fish_kwatch_using_subcommand sim" -l port -d 'Port to listen on (127.0.0.1); 0 picks a free port' -r
complete -c kwatch -n "__fish_kwatch_using_subcommand sim" -l clusters -d 'Serve N clusters, each its own server on its own port (from --port on, unless 0), with its own storage, token and control API; the kubeconfig has a context per cluster, kwatch-sim-1 to kwatch-sim-N' -r
complete -c kwatch -n "__fish_kwatch_using_subcommand sim" -l write-kubeconfig -d 'Write a kubeconfig for the simulated cluster to this file (mode 0600)' -r -F
complete -c kwatch -n "__fish_kwatch_using_subcommand sim" -l objects -d 'Number of pods to preload' -r
complete -c kwatch -n "__fish_kwatch_using_subcommand sim" -l churn -d 'Changes per second made by the churn generator (0 = none)' -r
complete -c kwatch -n "__fish_kwatch_using_subcommand sim" -l seed -d 'Seed of the churn and fault generators' -r
complete -c kwatch -n "__fish_kwatch_using_subcommand sim" -l scenario -d 'What the simulated cluster does on its own' -r -f -a "steady\t'Churn only'
chaos\t'Churn plus seeded random faults (dropped watches, compactions, 429/500/503, stalls, …)'
idle\t'No churn, no faults'"
complete -c kwatch -n "__fish_kwatch_using_subcommand sim" -l history -d 'Number of changes kept in the watch history before the oldest are compacted' -r
complete -c kwatch -n "__fish_kwatch_using_subcommand sim" -l bookmark-interval -d 'Seconds between watch bookmarks (a real API server sends one about every minute)' -r
complete -c kwatch -n "__fish_kwatch_using_subcommand sim" -l progress-notify-interval -d 'Seconds between etcd\'s progress notifications, which bring the watch cache of a quiet resource to the current revision, so that its watches get bookmarks again (etcd\'s default: 600)' -r
complete -c kwatch -n "__fish_kwatch_using_subcommand sim" -l pod-size -d 'Size of the preloaded pods: default (~3.3 KB), small (~1.5 KB), medium (~4.7 KB), large (~12 KB) or realistic (~9 KB, half of it managedFields), for benchmarks' -r -f -a "default\t'About 3.3 KB: two containers, probes, conditions, container statuses'
small\t'About 1.5 KB: one container, no probes, tolerations or container statuses'
medium\t'About 4.7 KB: the default pod plus a last-applied-configuration annotation'
large\t'About 12 KB: the default pod plus a large annotation (as with big env lists or sidecar-injected pods)'
realistic\t'About 9 KB, as a genuine server\'s Deployment pod: a Deployment-sized spec (env, probes, security context), status conditions, and managedFields of four managers making about half the bytes'"
complete -c kwatch -n "__fish_kwatch_using_subcommand sim" -l cert-shape -d 'The serving certificate: ca (a CA and a leaf it signed), self-signed (one CA:TRUE certificate, the kubeconfig\'s CA), pinned-leaf (a leaf signed by a CA the kubeconfig does not hold, pinned as its CA), ca-true-leaf (a CA:TRUE leaf the CA signed)' -r -f -a "ca\t'A CA and a serving certificate it signed'
self-signed\t'A self-signed CA:TRUE serving certificate, named as the kubeconfig\'s CA'
pinned-leaf\t'A serving certificate signed by an unnamed CA, pinned as the kubeconfig\'s CA'
ca-true-leaf\t'A CA:TRUE serving certificate signed by the sim\'s CA (Go accepts it, webpki does not)'"
complete -c kwatch -n "__fish_kwatch_using_subcommand sim" -l server-version -d 'The Kubernetes version `/version` reports, as MAJOR.MINOR (`1.35`, `1.32+`) [default: the captured kube-apiserver\'s, 1.32]; taken as given, to try what a client makes of odd versions' -r
complete -c kwatch -n "__fish_kwatch_using_subcommand sim" -l bend -d 'Bend the list/watch protocol as some servers do, from the start (repeat it or separate modes with commas; `POST /_sim/bend` switches them later)' -r -f -a "no-end-bookmark\t'A streaming list never sends its initial-events-end bookmark'
close-on-expired\t'A watch from a too-old resourceVersion closes cleanly instead of a 410'
forbid-watch\t'Watches are forbidden (403) while lists are allowed'
opaque-rv\t'resourceVersions are not integers (composite, base64)'
no-bookmarks\t'No bookmarks on watches (but the end of a streaming list)'"
complete -c kwatch -n "__fish_kwatch_using_subcommand sim" -l insecure-http -d 'Serve plain HTTP instead of HTTPS (kubectl then sends no token)'
complete -c kwatch -n "__fish_kwatch_using_subcommand sim" -l uncompacted -d 'Keep revision 1 in reach, as a young etcd before kube-apiserver\'s first compaction: a watch or continued list from any old revision is served, not 410 Expired'
complete -c kwatch -n "__fish_kwatch_using_subcommand sim" -l legacy-discovery -d 'Serve only the legacy discovery documents, as a server without aggregated discovery (before Kubernetes 1.26, or with the feature off) does'
complete -c kwatch -n "__fish_kwatch_using_subcommand sim" -l controllers -d 'Run the controllers kube-controller-manager would: Deployments get ReplicaSets, ReplicaSets and Jobs get pods (which a built-in kubelet runs), deleted owners\' dependents are collected, with the genuine Events. Off: nothing changes objects but churn and clients (`POST /_sim/controllers {"on":true}` switches them later)'
complete -c kwatch -n "__fish_kwatch_using_subcommand sim" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kwatch -n "__fish_kwatch_using_subcommand completions" -l static -d 'A script with the flags and fixed value lists only, asking kwatch nothing'
complete -c kwatch -n "__fish_kwatch_using_subcommand completions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kwatch -n "__fish_kwatch_using_subcommand man" -s h -l help -d 'Print help'
complete -c kwatch -n "__fish_kwatch_using_subcommand check" -s n -l namespace -d 'Namespace to check in (default: the context\'s namespace, else "default")' -r -f
complete -c kwatch -n "__fish_kwatch_using_subcommand check" -s l -l selector -d 'Label selector of the lists and watches, as kubectl\'s -l' -r -f
complete -c kwatch -n "__fish_kwatch_using_subcommand check" -l field-selector -d 'Field selector of the lists and watches' -r
complete -c kwatch -n "__fish_kwatch_using_subcommand check" -s o -l output -d 'table (for people) or json (one JSON object per check, for scripts)' -r -f -a "table\t'A table for people'
json\t'JSON lines: one object per check'"
complete -c kwatch -n "__fish_kwatch_using_subcommand check" -l write -d 'Also create, patch and delete a ConfigMap in this namespace, timing each change\'s arrival on a watch' -r -f
complete -c kwatch -n "__fish_kwatch_using_subcommand check" -l kubeconfig -d 'Kubeconfig file (default: $KUBECONFIG, which may list several, else ~/.kube/config)' -r -F
complete -c kwatch -n "__fish_kwatch_using_subcommand check" -l context -d 'Kubeconfig context to use; several, comma-separated, watch each into one stream' -r -f
complete -c kwatch -n "__fish_kwatch_using_subcommand check" -l shard -d 'Keep only the contexts of shard I of N (0 ≤ I < N), so that N processes split a fleet' -r
complete -c kwatch -n "__fish_kwatch_using_subcommand check" -l request-timeout -d 'Timeout of each request before its response starts (0 = none), e.g. 10s, 1m' -r
complete -c kwatch -n "__fish_kwatch_using_subcommand check" -l cache-dir -d 'kubectl\'s cache directory, for discovery documents [default: ~/.kube/cache]' -r -F
complete -c kwatch -n "__fish_kwatch_using_subcommand check" -s s -l server -d 'The API server\'s address, e.g. https://10.0.0.1:6443' -r
complete -c kwatch -n "__fish_kwatch_using_subcommand check" -l token -d 'Bearer token (replaces the kubeconfig user\'s credentials)' -r
complete -c kwatch -n "__fish_kwatch_using_subcommand check" -l user -d 'The kubeconfig user to use instead of the context\'s' -r
complete -c kwatch -n "__fish_kwatch_using_subcommand check" -l cluster -d 'The kubeconfig cluster to use instead of the context\'s' -r
complete -c kwatch -n "__fish_kwatch_using_subcommand check" -l as -d 'Act as this user: see what that identity\'s informer would get, 403s included' -r
complete -c kwatch -n "__fish_kwatch_using_subcommand check" -l as-group -d 'Act as a member of this group (Impersonate-Group; repeat for several)' -r
complete -c kwatch -n "__fish_kwatch_using_subcommand check" -l as-uid -d 'Act with this UID (Impersonate-Uid)' -r
complete -c kwatch -n "__fish_kwatch_using_subcommand check" -l certificate-authority -d 'CA certificate file(s) (PEM) to verify the server with (replaces the kubeconfig\'s)' -r -F
complete -c kwatch -n "__fish_kwatch_using_subcommand check" -l client-certificate -d 'Client certificate file (PEM) for TLS client authentication' -r -F
complete -c kwatch -n "__fish_kwatch_using_subcommand check" -l client-key -d 'Client key file (PEM) for TLS client authentication' -r -F
complete -c kwatch -n "__fish_kwatch_using_subcommand check" -l tls-server-name -d 'Server name to verify the certificate against and send as SNI' -r
complete -c kwatch -n "__fish_kwatch_using_subcommand check" -s A -l all-namespaces -d 'Check across all namespaces'
complete -c kwatch -n "__fish_kwatch_using_subcommand check" -l sim -d 'Check the built-in simulated cluster, started in-process'
complete -c kwatch -n "__fish_kwatch_using_subcommand check" -l all-contexts -d 'Watch every context of the kubeconfig, into one stream'
complete -c kwatch -n "__fish_kwatch_using_subcommand check" -l insecure-skip-tls-verify -d 'Do not verify the server\'s certificate (insecure; clears the kubeconfig\'s CA)'
complete -c kwatch -n "__fish_kwatch_using_subcommand check" -l disable-compression -d 'Do not ask for gzip-compressed responses (as the kubeconfig\'s disable-compression)'
complete -c kwatch -n "__fish_kwatch_using_subcommand check" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kwatch -n "__fish_kwatch_using_subcommand replay" -s n -l namespace -d 'Only the recorded objects of this namespace (cluster-scoped ones stay)' -r -f
complete -c kwatch -n "__fish_kwatch_using_subcommand replay" -s l -l selector -d 'Only the recorded objects whose labels match (=, ==, !=, in, notin, exists, !key)' -r -f
complete -c kwatch -n "__fish_kwatch_using_subcommand replay" -l context -d 'Only the records of these contexts (comma-separated); a file recorded from one context names none, and is not filtered' -r
complete -c kwatch -n "__fish_kwatch_using_subcommand replay" -l since -d 'Only the records at or after TIME (RFC 3339, e.g. 2026-11-28T03:00:00Z; a time without offset is UTC; 15m is fifteen minutes ago). --diff and --view handlers still know each object as it was before' -r
complete -c kwatch -n "__fish_kwatch_using_subcommand replay" -l until -d 'A TIME: only the records at or before it. Else a CONDITION: stop after the record that meets it (as the watch\'s --until), exit 0 when met, 4 when the recording ends first' -r
complete -c kwatch -n "__fish_kwatch_using_subcommand replay" -l at -d 'Every object\'s state at TIME: its last record at or before it, unless that was its deletion (answered from an index in a database)' -r
complete -c kwatch -n "__fish_kwatch_using_subcommand replay" -l max-events -d 'Stop after printing this many deltas (handler calls with --view handlers)' -r
complete -c kwatch -n "__fish_kwatch_using_subcommand replay" -l timeline -d 'Draw the recording as one HTML page at OUT.html instead of printing it' -r -F
complete -c kwatch -n "__fish_kwatch_using_subcommand replay" -s o -l output -d 'Output format: table, wide, json, yaml, name, watch-events, custom-columns=…, jsonpath=…' -r -f -a "table\t''
wide\t''
json\t''
yaml\t''
name\t''
watch-events\t''
custom-columns=\t''
jsonpath=\t''"
complete -c kwatch -n "__fish_kwatch_using_subcommand replay" -l live-history -d '--live: how many versions of each object its history screen (Enter) keeps; the oldest go first' -r
complete -c kwatch -n "__fish_kwatch_using_subcommand replay" -l color -d 'When to use colour: auto (a terminal and NO_COLOR unset), always or never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kwatch -n "__fish_kwatch_using_subcommand replay" -s L -l label-columns -d 'Table: a column with the value of each of these labels (comma-separated keys)' -r
complete -c kwatch -n "__fish_kwatch_using_subcommand replay" -l view -d 'What to print: deltas, handlers (the OnAdd/OnUpdate/OnDelete calls) or fleet' -r -f -a "deltas\t''
handlers\t''
fleet\t''"
complete -c kwatch -n "__fish_kwatch_using_subcommand replay" -l types -d 'Print only these delta types: Added,Updated,Deleted,Replaced,Sync,ReplacedAll,SyncAll' -r -f -a "Added\t''
Updated\t''
Deleted\t''
Replaced\t''
Sync\t''
ReplacedAll\t''
SyncAll\t''"
complete -c kwatch -n "__fish_kwatch_using_subcommand replay" -l changes -d 'Print an update only when PARTS changed: spec,status,metadata,labels,annotations,data' -r -f -a "spec\t''
status\t''
metadata\t''
labels\t''
annotations\t''
data\t''"
complete -c kwatch -n "__fish_kwatch_using_subcommand replay" -l explain -d 'With a database and --at: its query plan on stderr first (EXPLAIN), to see that it reads the index (the tests and the benchmark)'
complete -c kwatch -n "__fish_kwatch_using_subcommand replay" -l stats -d 'At the end, the summary of the records replayed on stderr (as the watch\'s --stats)'
complete -c kwatch -n "__fish_kwatch_using_subcommand replay" -l watch-only -d 'Do not print the recorded initial lists\' deltas (as the watch\'s --watch-only)'
complete -c kwatch -n "__fish_kwatch_using_subcommand replay" -s i -l live -d 'A full-screen view on a terminal: the informer\'s cache as a table that changes in place, with each object\'s history (Enter) and the reflector\'s state (? for keys)'
complete -c kwatch -n "__fish_kwatch_using_subcommand replay" -l show-managed-fields -d 'Keep metadata.managedFields in printed objects (dropped by default, as kubectl does)'
complete -c kwatch -n "__fish_kwatch_using_subcommand replay" -l show-labels -d 'Table: a LABELS column with all labels'
complete -c kwatch -n "__fish_kwatch_using_subcommand replay" -l no-headers -d 'Table and custom-columns: no header line'
complete -c kwatch -n "__fish_kwatch_using_subcommand replay" -l timestamps -d 'Table: a TIME column with when each delta was printed (UTC, milliseconds)'
complete -c kwatch -n "__fish_kwatch_using_subcommand replay" -l diff -d 'Show what each update changed against the version kwatch knew before'
complete -c kwatch -n "__fish_kwatch_using_subcommand replay" -l diff-all -d 'As --diff, including resourceVersion, managedFields and generation'
complete -c kwatch -n "__fish_kwatch_using_subcommand replay" -l blame -d 'Name who made each change: the managedFields entry owning each changed path'
complete -c kwatch -n "__fish_kwatch_using_subcommand replay" -l quiet-relists -d 'Hide a relist\'s or resync\'s deltas that change nothing; keep its Relisted summary'
complete -c kwatch -n "__fish_kwatch_using_subcommand replay" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kwatch -n "__fish_kwatch_using_subcommand help; and not __fish_seen_subcommand_from sim completions man check replay help" -f -a "sim" -d 'Run the built-in simulated Kubernetes API server until interrupted'
complete -c kwatch -n "__fish_kwatch_using_subcommand help; and not __fish_seen_subcommand_from sim completions man check replay help" -f -a "completions" -d 'Print a shell completion script to stdout'
complete -c kwatch -n "__fish_kwatch_using_subcommand help; and not __fish_seen_subcommand_from sim completions man check replay help" -f -a "man" -d 'Print the man page (roff) to stdout'
complete -c kwatch -n "__fish_kwatch_using_subcommand help; and not __fish_seen_subcommand_from sim completions man check replay help" -f -a "check" -d 'Check how the server lists and watches a resource, as client-go expects'
complete -c kwatch -n "__fish_kwatch_using_subcommand help; and not __fish_seen_subcommand_from sim completions man check replay help" -f -a "replay" -d 'Re-render a recording made with --record, in any output format'
complete -c kwatch -n "__fish_kwatch_using_subcommand help; and not __fish_seen_subcommand_from sim completions man check replay help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
