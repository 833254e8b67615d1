//! Test kubeconfigs of several contexts, each of a simulator's cluster as it is or bent
//! (another user, a server that is down, an entry that cannot be used).

use std::path::{Path, PathBuf};

use super::SimProcess;

/// One context of a test kubeconfig.
pub enum Entry<'a> {
    /// The simulator's cluster and user.
    Live(&'a SimProcess),
    /// The simulator's user, impersonating `as` (the simulator's policy forbids a user
    /// it does not know).
    As(&'a SimProcess, &'a str),
    /// A server nobody listens at: `sim`'s entries with the server's port changed.
    Down(&'a SimProcess, u16),
    /// A plain-HTTP server at this port (`kwatch sim --insecure-http --port P`, started
    /// later or not at all): `sim`'s entries with the server changed, no CA.
    Plain(&'a SimProcess, u16),
    /// An entry that cannot be used: its context names a cluster the kubeconfig does not
    /// have (`"no-cluster"`), its user a certificate file that is not there
    /// (`"missing-cert"`), or a credential plugin that fails (`"failing-exec"`).
    Broken(&'a SimProcess, &'a str),
}

/// A port on 127.0.0.1 nobody listens at: bound, then closed.
pub fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("binding a port");
    l.local_addr().expect("its address").port()
}

/// A kubeconfig with one context per `(name, entry)` (cluster, user and context named
/// `name`), written into `dir`.
pub fn fleet_kubeconfig(entries: &[(&str, Entry<'_>)], dir: &Path) -> PathBuf {
    let mut merged: Option<serde_yaml::Value> = None;
    for (name, entry) in entries {
        let sim = match entry {
            Entry::Live(s)
            | Entry::As(s, _)
            | Entry::Down(s, _)
            | Entry::Plain(s, _)
            | Entry::Broken(s, _) => s,
        };
        let text = std::fs::read_to_string(&sim.kubeconfig).expect("the sim's kubeconfig");
        let mut kc: serde_yaml::Value = serde_yaml::from_str(&text).expect("YAML");
        for list in ["clusters", "users", "contexts"] {
            kc[list][0]["name"] = (*name).into();
        }
        kc["contexts"][0]["context"]["cluster"] = (*name).into();
        kc["contexts"][0]["context"]["user"] = (*name).into();
        match entry {
            Entry::Live(_) => {}
            Entry::As(_, who) => kc["users"][0]["user"]["as"] = (*who).into(),
            Entry::Down(_, port) => {
                kc["clusters"][0]["cluster"]["server"] = format!("https://127.0.0.1:{port}").into()
            }
            Entry::Plain(_, port) => {
                kc["clusters"][0]["cluster"] =
                    serde_yaml::from_str(&format!("{{server: \"http://127.0.0.1:{port}\"}}"))
                        .expect("YAML")
            }
            Entry::Broken(_, "no-cluster") => {
                kc["contexts"][0]["context"]["cluster"] = format!("{name}-absent").into()
            }
            Entry::Broken(_, "missing-cert") => {
                let missing = dir.join(format!("{name}-absent.pem"));
                kc["users"][0]["user"] = serde_yaml::from_str(&format!(
                    "{{client-certificate: {0}, client-key: {0}}}",
                    missing.display()
                ))
                .expect("YAML");
            }
            Entry::Broken(_, "failing-exec") => {
                kc["users"][0]["user"] = serde_yaml::from_str(
                    "{exec: {apiVersion: client.authentication.k8s.io/v1, command: false, \
                     interactiveMode: Never}}",
                )
                .expect("YAML")
            }
            Entry::Broken(_, how) => panic!("no such broken entry: {how}"),
        }
        // Only the first cluster, user and context (the sim writes more).
        for list in ["clusters", "users", "contexts"] {
            kc[list].as_sequence_mut().expect(list).truncate(1);
        }
        match &mut merged {
            None => merged = Some(kc),
            Some(m) => {
                for list in ["clusters", "users", "contexts"] {
                    let item = kc[list][0].clone();
                    m[list].as_sequence_mut().expect(list).push(item);
                }
            }
        }
    }
    let path = dir.join("fleet.kubeconfig");
    let text = serde_yaml::to_string(&merged.expect("an entry")).expect("YAML");
    std::fs::write(&path, text).expect("writing the kubeconfig");
    path
}
