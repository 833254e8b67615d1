#!/usr/bin/env python3
"""Writes crates/core/testdata/jsonpath/kubectl.json: what kubectl prints for many JSONPath
templates and custom-columns specs (most from client-go's util/jsonpath/jsonpath_test.go,
adapted to objects kubectl can get), for kwatch's port of client-go's JSONPath
(crates/core/src/output/template/tests.rs) to be held to.

Run against a running `kwatch sim` with the kubectl to compare with:

    kwatch sim --churn 0 --write-kubeconfig /tmp/kc &
    KUBECONFIG=/tmp/kc tools/capture_jsonpath_cases.py > crates/core/testdata/jsonpath/kubectl.json

It creates custom resources (`widgets.example.com`, whose schema keeps any field) holding
the test data of jsonpath_test.go under `spec`, runs `kubectl get widget NAME -o
jsonpath=TEMPLATE` (and `-o custom-columns=A:PATH`) for each case, and writes each object
as the server sent it with kubectl's stdout, exit code and first stderr line.
"""

import json
import subprocess
import sys

NODES = {"kind": "List", "items": [
    {"kind": "None", "metadata": {"name": "127.0.0.1", "labels": {"kubernetes.io/hostname": "127.0.0.1"}},
     "status": {"capacity": {"cpu": "4"}, "ready": True, "addresses": [{"type": "LegacyHostIP", "address": "127.0.0.1"}]}},
    {"kind": "None", "metadata": {"name": "127.0.0.2", "labels": {"kubernetes.io/hostname": "127.0.0.2"}},
     "status": {"capacity": {"cpu": "8"}, "ready": False, "addresses": [
         {"type": "LegacyHostIP", "address": "127.0.0.2"}, {"type": "another", "address": "127.0.0.3"}]}}],
    "users": [{"name": "myself", "user": {}}, {"name": "e2e", "user": {"username": "admin", "password": "secret"}}]}
STORE = {"Name": "jsonpath",
         "Book": [{"Category": "reference", "Author": "Nigel Rees", "Title": "Sayings of the Centurey", "Price": 8.95},
                  {"Category": "fiction", "Author": "Evelyn Waugh", "Title": "Sword of Honour", "Price": 12.99},
                  {"Category": "fiction", "Author": "Herman Melville", "Title": "Moby Dick", "Price": 8.99}],
         "Bicycle": [{"Color": "red", "Price": 19.95, "IsNew": True}, {"Color": "green", "Price": 20.01, "IsNew": False}],
         "Labels": {"engieer": 10, "web/html": 15, "k8s-app": 20},
         "Employees": {"jason": "manager", "dan": "clerk"}}
TYPES = {"bools": [True, False, True, False], "integers": [1, 2, 3, 4], "floats": [1.0, 2.2, 3.3, 4.0],
         "strings": ["one", "two", "three", "four"], "interfaces": [True, "one", 1, 1.1],
         "maps": [{"name": "one", "value": 1}, {"name": "two", "value": 2.02}, {"name": "three", "value": 3.03},
                  {"name": "four", "value": 4.04}],
         "points": [{"id": "i1", "x": 4, "y": -5}, {"id": "i2", "x": -2, "y": -5, "z": 1}, {"id": "i3", "x": 8, "y": 3},
                    {"id": "i4", "x": -6, "y": -1}, {"id": "i5", "x": 0, "y": 2, "z": 1}, {"id": "i6", "x": 1, "y": 4}],
         "ints": [2, 6, 3, 7], "days": ["Monday", "Tudesday"], "nums": [0, 1, 2, 3, 4],
         "nulls": {"a": None, "b": [None, 1]}, "html": "<a&b>", "big": 1e21, "small": 1e-7,
         "obj": {"html": "<a&b>", "f": 1.5, "g": 2.5e-8}, "empty": [], "word": "ab"}
PODS = {"items": [
    {"metadata": {"name": "pod1", "annotations": {"color": "blue"}}, "status": {"phase": "Running"},
     "spec": {"containers": [{"name": "foo", "another": [{"name": "value1"}, {"name": "value2"}]},
                             {"name": "bar", "another": [{"name": "value1"}, {"name": "value2"}]}]}},
    {"metadata": {"name": "pod2"}, "status": {"phase": "Running"},
     "spec": {"containers": [{"name": "baz", "another": [{"name": "value1"}, {"name": "value2"}]}]}},
    {"metadata": {"name": "pod3", "annotations": {"color": "green"}}, "status": {"phase": "Pending"}},
    {"metadata": {"name": "pod4", "annotations": {"color": "blue"}}},
    {"resourceVersion": ""}]}
ANNOTATIONS = {"deployment.kubernetes.io/revision": "1", "a.b/c.d": "x"}
FIXTURES = {"nodes": NODES, "store": STORE, "types": TYPES, "pods": PODS}

# (object, template, compare sorted words: kubectl's order follows Go's map order, random)
JSONPATH = [(o, t, False) for o, t in [
    ("types", "{ .spec.bools }"), ("types", "{ .spec.bools[0] }"), ("types", "{ .spec.bools[-1] }"),
    ("types", "{ .spec.bools[0:2] }"), ("types", "{ .spec.bools[:2] }"), ("types", "{ .spec.bools[:4:2] }"),
    ("types", "{ .spec.integers }"), ("types", "{ .spec.integers[-2] }"), ("types", "{ .spec.integers[:4:2] }"),
    ("types", "{ .spec.floats }"), ("types", "{ .spec.floats[0] }"), ("types", "{ .spec.floats[-2] }"),
    ("types", "{ .spec.floats[0:2] }"), ("types", "{ .spec.strings }"), ("types", "{ .spec.strings[-2] }"),
    ("types", "{ .spec.strings[:4:2] }"), ("types", "{ .spec.interfaces }"), ("types", "{ .spec.interfaces[0:2] }"),
    ("types", "{ .spec.interfaces[:4:2] }"), ("types", "{ .spec.maps }"), ("types", "{ .spec.maps[0] }"),
    ("types", "{ .spec.maps[-2] }"), ("types", "{ .spec.maps[::2] }"), ("types", "{ .spec.maps[1::2] }"),
    ("types", "{.spec.points[?(@.z)].id}"), ("types", "{.spec.points[0]['id']}"),
    ("types", "{.spec.points[?(@.x<0)].id}"), ("types", "{.spec.points[?(@.x>=4)].id}"),
    ("types", '{.spec.points[?(@.id=="i3")].y}'), ("types", '{.spec.points[?(@.id!="i3")].id}'),
    ("types", "{.spec.points[?(@.x<=0)].id}"), ("types", "{.spec.points[?(@.x>1.5)].id}"),
    ("types", "{.spec.points[?(@.y>@.x)].id}"), ("types", "{.spec.ints[?(@<5)]}"),
    ("types", "{.spec.nums[1,3,4]}"), ("types", "{.spec.nums[ 1 , 3 ]}"), ("types", "{.spec.days[0:2]}"),
    ("types", "{.spec.nulls.a}"), ("types", "{.spec.nulls.b}"), ("types", "{.spec.nulls.b[0]}"),
    ("types", "{.spec.nulls.a.x}"), ("types", "{.spec.nulls.a[0]}"), ("types", "{.spec.nulls}"),
    ("types", "{.spec.html}"), ("types", "{.spec.big}"), ("types", "{.spec.small}"), ("types", "{.spec.obj}"),
    ("types", "{.spec.obj.f}"), ("types", "{.spec.obj.g}"), ("types", "{.spec.missing}"),
    ("types", "before-{.spec.missing}after"), ("types", "{.spec.integers[9]}"), ("types", "{.spec.integers[-9]}"),
    ("types", "{.spec.integers[3:1]}"), ("types", "{.spec.integers[0:0]}"), ("types", "{.spec.integers[5:5]}"),
    ("types", "{.spec.integers[0:4:0]}"), ("types", "{.spec.integers[0:4:-1]}"), ("types", "{.spec.empty[0]}"),
    ("types", "{.spec.empty[*]}"), ("types", "{.spec.html[0]}"), ("types", "{.spec.word.*}"),
    ("types", "{.spec.word[*]}"), ("types", "{.spec.html[?(@.x)]}"),
    ("types", "{.metadata.annotations.deployment\\.kubernetes\\.io/revision}"),
    ("types", "{.metadata.annotations['deployment\\.kubernetes\\.io/revision']}"),
    ("types", "{.metadata.annotations['deployment.kubernetes.io/revision']}"),
    ("types", '{.metadata.annotations["deployment.kubernetes.io/revision"]}'),
    ("types", "{.metadata.annotations.a\\.b/c\\.d}"), ("types", "{.metadata.annotations['a\\.b/c\\.d', 'a\\.b/c\\.d']}"),
    ("types", "{.metadata.name}"), ("types", "{$.metadata.name}"), ("types", "{@.metadata.name}"),
    ("types", "{.}"), ("types", "{.spec.nulls.b.*}"), ("types", "hello"), ("types", ".metadata.name"),
    ("types", '{"{"}'), ("types", '{"a\\tb"}'), ("types", "{'single'}"), ("types", '{"\\u00e9\\x41\\101"}'),
    ("types", '{"\\q"}'), ("types", "{'it''s'}"), ("types", "{5}"), ("types", "{-1.50}"), ("types", "{true}"),
    ("types", "{.spec.strings[*]}"), ("types", "{.spec.maps[*].name}"),
    ("types", "{.spec.maps[?(@.value>2)].name}"), ("types", "{.spec.maps[?(@.value==1)].name}"),
    ("types", "{.spec.maps[?(@.name>\"p\")].name}"), ("types", "{.spec.bools[?(@==true)]}"),
    ("types", "{.spec.bools[?(@<true)]}"), ("types", "{.spec.points[?(@.id==5)].id}"),
    ("types", "{.spec.nulls[?(@.a)]}"), ("types", "{.spec.interfaces[?(@==1)]}"),
    ("store", "{.spec.Labels.web/html}"), ("store", "{.spec.Employees.jason}"), ("store", "{.spec.Labels.k8s-app}"),
    ("store", "{.spec.Bicycle[*].Color}"), ("store", "{.spec.Book[*].Author}"), ("store", "{.spec.Bicycle}"),
    ("store", '{range .spec.Bicycle[*]}{ @ }{ " " }{end}'), ("store", "{.spec.Book[-1:]}"), ("store", "{..Book[2]}"),
    ("store", "{.spec.Bicycle[?(@.IsNew==true)]}"), ("store", "{.spec.Bicycle[?(@.Color=~'.*ed.*')]}"),
    ("store", "{hello}"), ("store", "{.spec.Labels[0]}"), ("store", "{.spec.Book[?(@.Price<>10)]}"),
    ("store", "{range .spec.Labels.*}{@}{end}{end}"), ("store", "{range .spec.Book[*]}{.Title}"),
    ("store", "{range .spec.Book}{.Title}{end}"), ("store", "{.spec.Book[?(@.Price<10)].Title}"),
    ("store", "{.spec.Book[?(@.Price<10.0)].Title}"), ("store", "{.spec.Book[?(@.Category=='fiction')].Title}"),
    ("store", "{.spec.Book[?(@.Title)].Price}"), ("store", "{....Price}"), ("store", "{.spec..Title}"),
    ("store", "{end}"), ("store", "{range .spec.Book[*]}{range .x[*]}{end}{.Title},{end}"),
    ("nodes", "{range .spec.items[*]}{.metadata.name}, {end}{.spec.kind}"),
    ("nodes", '{range .spec.items[*]}{.metadata.name}{"\\t"}{end}'),
    ("nodes", "{.spec.items[*].status.addresses[*].address}"),
    ("nodes", "{range .spec.items[*]}{range .status.addresses[*]}{.address}, {end}{end}"),
    ("nodes", "{.spec.items[*]['metadata.name', 'status.capacity']}"),
    ("nodes", "{range .spec.items[*]}[{.metadata.name}, {.status.capacity}] {end}"),
    ("nodes", '{.spec.users[?(@.name=="e2e")].user.password}'),
    ("nodes", "{.spec.items[0].metadata.labels.kubernetes\\.io/hostname}"),
    ("nodes", '{.spec.items[?(@.metadata.labels.kubernetes\\.io/hostname=="127.0.0.1")].kind}'),
    ("nodes", "{.spec.items[?(@..ready==true)].metadata.name}"),
    ("nodes", '{range .spec.items[?(.status.ready==true)]}{.metadata.name}{" ready\\n"}{end}'),
    ("nodes", "{range .spec.missing[*]}{.x}{end}done"), ("nodes", '{.spec.items[*].status.capacity.cpu}{"\\n"}'),
    ("nodes", "{.spec.items[0].status.addresses[0]}"), ("nodes", "{.spec.items[?(@.status.ready)].metadata.name}"),
    ("nodes", "{.spec.items[ 0 ].metadata.name}"), ("nodes", "{ .spec.items[0] .metadata.name }"),
    ("nodes", "{.spec.items[0].metadata.name"), ("nodes", "{.spec.items[0"), ("nodes", "{.spec.items[?(@.x==1)}"),
    ("nodes", "{.spec.items[x]}"), ("nodes", "{.spec.items[1:2:3:4]}"), ("nodes", '{"unterminated}'),
    ("nodes", "{.spec.items[0]#}"), ("nodes", "{.spec.items[?(@.x==)]}"), ("nodes", "{.spec.items[?(@.x)}"),
    ("nodes", "{.spec.items[-]}"), ("nodes", "{range .spec.items[*]}{.metadata.name}"),
    ("nodes", "{range .spec.items}{.metadata.name}{end}"), ("nodes", "{.spec.items[0].metadata.name}{{end}"),
    ("nodes", "a}b{.spec.kind}"), ("nodes", "{.spec.kind}\n{.spec.kind}"), ("nodes", "{.spec.kind\n}"),
    ("pods", '{range .spec.items[*]}{.metadata.name}{":"}{range @.spec.containers[*]}{.name}{","}{end}{"+"}{end}'),
    ("pods", '{range .spec.items[*]}{.metadata.name}{"~"}{range @.spec.containers[*]}{.name}{":"}{range @.another[*]}{.name}{","}{end}{"+"}{end}{"#"}{end}'),
    ("pods", '{range .spec.items[*]}{.metadata.name}{"\\t"}{range @.spec.containers[*]}{.name}{" "}{end}{"\\t"}{range @.spec.containers[*]}{.name}{" "}{end}{"\\n"}{end}'),
    ("pods", '{.spec.items[?(@.metadata.annotations.color=="blue")].metadata.name}'),
    ("pods", '{range .spec.items[?(.status.phase=="Running")]}{.metadata.name}{" is Running\\n"}{end}'),
    ("pods", "{.spec.items[0].spec.containers[0:].name}"), ("pods", "{.spec.items[0].spec.containers[0:2:].name}"),
    ("pods", "{.spec.items[0].spec.containers[1:2:1].name}"), ("pods", "{.spec.items[0].spec.containers[0:2:5].name}"),
    ("pods", "{.spec.items[0].spec.containers[-1:0].name}"), ("pods", "{.spec.items[0].spec.containers[-3].name}"),
    ("pods", "{.spec.items[0].spec.containers[-2:-2].name}"), ("pods", "{.spec.items[0].spec.containers[-1:-2].name}"),
]] + [(o, t, True) for o, t in [
    ("store", "{..Price}"), ("store", "{...Price}"), ("store", "{.spec.Bicycle[0].*}"),
    ("store", "{.spec.Labels.*}"), ("nodes", "{..name}"), ("nodes", "{.spec.items[0]..address}"),
    ("types", "{.spec.nulls..*}"), ("store", "{range .spec.Bicycle[*]}{ \"{\" }{ @.* }{ \"} \" }{end}"),
]]

COLUMNS = [
    ("types", "A:.spec.nulls.a"), ("types", "A:.spec.nulls.b"), ("types", "A:.spec.nulls"), ("types", "A:.spec.missing"),
    ("types", "A:.spec.obj"), ("types", "A:.spec.strings[*]"), ("types", "A:.spec.strings"), ("types", "A:.spec.big"),
    ("types", "A:.spec.obj.g"), ("types", "A:.spec.html"), ("types", "A:.spec.interfaces"), ("types", "A:.spec.points[0]"),
    ("types", "A:.metadata.annotations.deployment\\.kubernetes\\.io/revision"),
    ("types", "A:.metadata.annotations['deployment\\.kubernetes\\.io/revision']"),
    ("types", "A:{.metadata.name}"), ("types", "A:metadata.name"), ("types", "A:{metadata.name}"),
    ("types", 'A:.spec.maps[?(@.name=="two")].value'), ("types", "A:.spec.integers[9]"),
    ("types", "A:.spec.empty[*]"), ("types", "A:.spec.nums[1,3]"), ("types", "A:{.a}{.b}"), ("types", "A:"),
]


def kubectl(*args, stdin=None):
    return subprocess.run(["kubectl", *args], input=stdin, capture_output=True, text=True)


def main():
    objects = {}
    for name, spec in FIXTURES.items():
        o = {"apiVersion": "example.com/v1", "kind": "Widget",
             "metadata": {"name": name, "namespace": "default", "annotations": ANNOTATIONS}, "spec": spec}
        kubectl("delete", "widget", name, "-n", "default", "--ignore-not-found")
        p = kubectl("create", "-f", "-", stdin=json.dumps(o))
        if p.returncode != 0:
            sys.exit(p.stderr)
        raw = kubectl("get", "--raw", f"/apis/example.com/v1/namespaces/default/widgets/{name}")
        objects[name] = json.loads(raw.stdout)
    version = json.loads(kubectl("version", "--client", "-o", "json").stdout)["clientVersion"]["gitVersion"]
    cases = []
    for format_, rows in (("jsonpath", JSONPATH), ("custom-columns", [(o, t, False) for o, t in COLUMNS])):
        for obj, template, sort in rows:
            p = kubectl("get", "widget", obj, "-n", "default", "-o", f"{format_}={template}")
            err = p.stderr.splitlines()
            cases.append({"format": format_, "object": obj, "template": template, "sorted": sort,
                          "stdout": p.stdout, "exit": p.returncode, "stderr": err[0] if err else ""})
    json.dump({"kubectl": version, "objects": objects, "cases": cases}, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


main()
