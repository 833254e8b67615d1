//! The help's own sections, shared by `--help` and the man page: the examples, the exit
//! statuses and the environment (one table each, so the two never differ), and the text
//! `-h` and `--help` print after the flags, which [`crate::app::cli`] attaches to its
//! command. Imports nothing of the application.

/// What `kwatch --help`'s examples show: (command line, what it does). `-h` shows the
/// first [`SHORT_EXAMPLES`]; `--help` and the man page all of them.
pub const EXAMPLES: &[(&str, &str)] = &[
    ("kwatch pods", "the context's namespace (else \"default\")"),
    (
        "kwatch deploy,svc -A -l app=web",
        "two resources, one stream, all namespaces",
    ),
    (
        "kwatch deploy/web --until condition=Available --timeout 5m",
        "wait as `kubectl wait` does, printing every change meanwhile",
    ),
    (
        "kwatch pods -A -o json --until-synced",
        "the initial list as JSON lines, exit 0 once synced",
    ),
    (
        "kwatch all -n default --diff",
        "what `kubectl get all` lists, with what each update changed",
    ),
    (
        "kwatch pods --client-go 0.33 --view handlers",
        "the OnAdd/OnUpdate/OnDelete calls client-go 0.33's informer makes",
    ),
    (
        "kwatch pods -A --record pods.jsonl",
        "record the watch; `kwatch replay pods.jsonl` shows it again",
    ),
    (
        "kwatch pods --as system:serviceaccount:team-a:ci",
        "what that service account's informer gets, 403s included",
    ),
];

/// How many [`EXAMPLES`] `-h` shows.
pub const SHORT_EXAMPLES: usize = 3;

/// The exit codes (README "Exit codes"): (code, when).
pub const EXIT_STATUS: &[(&str, &str)] = &[
    ("0", "a stop condition was met (--max-events, --timeout, --until-synced, --until), or stdout was closed"),
    ("1", "an error: kubeconfig, unknown resource, a failure before the first sync"),
    ("2", "bad command-line usage"),
    ("3", "--timeout came first: before every resource synced (connecting included), with --until before the condition was met"),
    ("4", "with --until: the watch ended otherwise first (--max-events, --until-synced, stdout closed)"),
    ("5", "several contexts: the run ended as for 0, but a context was left out (down, refused, or not synced at --timeout)"),
    ("129", "hung up (SIGHUP)"),
    ("130", "interrupted (Ctrl-C)"),
    ("143", "terminated (SIGTERM)"),
];

/// The environment kwatch reads: (variable, what for).
pub const ENVIRONMENT: &[(&str, &str)] = &[
    ("KUBECONFIG", "the kubeconfig files, separated by ':', merged as kubectl merges them (without --kubeconfig)"),
    ("HOME", "~/.kube/config, and ~/.kube/cache for discovery documents"),
    ("KUBECACHEDIR", "kubectl's cache directory, as --cache-dir"),
    ("HTTP2_READ_IDLE_TIMEOUT_SECONDS", "seconds with nothing read before an HTTP/2 connection is pinged (30; 0: no health check), as client-go"),
    ("HTTP2_PING_TIMEOUT_SECONDS", "seconds a ping may go unanswered before the connection is closed (15), as client-go"),
    ("NO_COLOR", "no colour when set and not empty (--color always overrides)"),
    ("RUST_LOG", "which diagnostics go to stderr, as tracing's EnvFilter reads it (overrides -v)"),
    ("COMPLETE", "set by the completion scripts: kwatch prints candidates instead of watching"),
];

/// `(term, text)` lines as a help section's body: the texts in a column after the terms,
/// or under each term when the terms are long (the examples' command lines).
fn help_rows(rows: &[(&str, &str)]) -> String {
    let width = rows
        .iter()
        .map(|(t, _)| t.chars().count())
        .max()
        .unwrap_or(0);
    rows.iter()
        .map(|(term, text)| match width {
            0..=12 => format!("  {term:<width$}  {text}\n"),
            _ => format!("  {term}\n          {text}\n"),
        })
        .collect()
}

/// After `-h`'s flags: a few examples, and where the rest is.
pub fn short_after_help() -> String {
    let examples: String = EXAMPLES[..SHORT_EXAMPLES]
        .iter()
        .map(|(cmd, _)| format!("  {cmd}\n"))
        .collect();
    format!("Examples:\n{examples}\n--help shows every flag, more examples, the exit codes and the environment.")
}

/// After `--help`'s flags: EXAMPLES, EXIT STATUS, ENVIRONMENT (the man page's sections of
/// the same names, from the same tables).
pub fn long_after_help() -> String {
    format!(
        "Examples:\n{}\nExit status:\n{}\nEnvironment:\n{}",
        help_rows(EXAMPLES),
        help_rows(EXIT_STATUS),
        help_rows(ENVIRONMENT)
    )
}
