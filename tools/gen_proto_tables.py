#!/usr/bin/env python3
"""Writes crates/core/src/client/protobuf/tables/v1.MINOR.json: how to turn Kubernetes' protobuf wire
into the apiserver's JSON, for one server minor.

The table is data read from three checkouts of one release (no network):

    tools/gen_proto_tables.py --minor 1.32 \\
        --api DIR/api --apimachinery DIR/apimachinery \\
        --apiextensions DIR/apiextensions-apiserver \\
        --out crates/core/src/client/protobuf/tables/v1.32.json

(`git archive v0.32.13` of kubernetes/api, kubernetes/apimachinery and
kubernetes/apiextensions-apiserver). Each package's `generated.proto` gives the wire: field
numbers, scalar types, repeated, maps, message names. Its Go structs give the JSON:
the order of fields (encoding/json writes them in Go order), the names and `omitempty`
of the json tags, pointer or value, `inline`, and which types have a custom marshaler
(listed in SPECIAL by proto name, and every named slice type wrapped in a message of
`items`). A proto field with no Go field, or a Go field with no proto field (other than
TypeMeta, which travels in the envelope), stops the generator: the table never guesses.

Format (crates/core/src/client/protobuf/table.rs reads it):

    {"minor": "1.32", "sources": {...},
     "messages": [[name, special, [[json, number, type, flags, value_type?], ...]], ...],
     "kinds": [[apiVersion, kind, message_index], ...]}

type: a scalar (string int32 int64 uint32 uint64 bool double float bytes), "map", or a
message index. flags: r repeated, m map (value_type is then the fifth element; keys are
strings), p pointer, o omitempty, i inline (the message's fields are written into the
enclosing object), x not written (json:"-"), t TypeMeta (kind and apiVersion from the envelope
at the top; in an embedded object only where kube-apiserver sets them, which
crates/core/src/client/protobuf/table.rs lists in SERVED_TYPE_META, citing Kubernetes).
"""

import argparse
import json
import os
import re
import sys

SCALARS = {"string", "int32", "int64", "uint32", "uint64", "bool", "double", "float", "bytes",
           "sint32", "sint64", "fixed32", "fixed64", "sfixed32", "sfixed64"}

META = "k8s.io.apimachinery.pkg.apis.meta.v1."
APIEXT = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions."
# Types whose MarshalJSON is not the struct's fields (by proto name).
SPECIAL = {
    META + "Time": "time",
    META + "MicroTime": "microtime",
    META + "Duration": "duration",
    META + "FieldsV1": "fieldsv1",
    "k8s.io.apimachinery.pkg.util.intstr.IntOrString": "intorstring",
    "k8s.io.apimachinery.pkg.api.resource.Quantity": "quantity",
    # Quantity embedded: its MarshalJSON is promoted.
    "k8s.io.apimachinery.pkg.api.resource.QuantityValue": "quantity",
    "k8s.io.apimachinery.pkg.runtime.RawExtension": "rawextension",
}
for _v in ("v1", "v1beta1"):
    SPECIAL[APIEXT + _v + ".JSON"] = "json"
    SPECIAL[APIEXT + _v + ".JSONSchemaPropsOrArray"] = "schemaorarray"
    SPECIAL[APIEXT + _v + ".JSONSchemaPropsOrBool"] = "schemaorbool"
    SPECIAL[APIEXT + _v + ".JSONSchemaPropsOrStringArray"] = "schemaorstringarray"


def strip_comment(line):
    """A Go line without its // comment (struct lines have no // inside tags)."""
    i = line.find("//")
    return line if i < 0 else line[:i]


def parse_proto(path):
    """package, {message: [(label, type, name, number, value_type)]} in file order."""
    text = open(path, encoding="utf-8").read()
    package = re.search(r"^package ([\w.]+);", text, re.M).group(1)
    messages = {}
    current = None
    for raw in text.splitlines():
        line = raw.split("//")[0].strip()
        if not line:
            continue
        m = re.match(r"message (\w+) \{$", line)
        if m:
            current = messages.setdefault(m.group(1), [])
            continue
        if line == "}":
            current = None
            continue
        if current is None:
            continue
        m = re.match(r"(optional|repeated) ([\w.]+) (\w+) = (\d+)", line)
        if m:
            current.append((m.group(1), m.group(2), m.group(3), int(m.group(4)), None))
            continue
        m = re.match(r"map<\s*([\w.]+)\s*,\s*([\w.]+)\s*> (\w+) = (\d+)", line)
        if m:
            current.append(("map", m.group(1), m.group(3), int(m.group(4)), m.group(2)))
            continue
        sys.exit(f"{path}: cannot read proto line: {raw!r}")
    return package, messages


def is_type_meta(go_type):
    return go_type.split(".")[-1] == "TypeMeta"


def parse_tag(tag, key):
    m = re.search(key + r':"([^"]*)"', tag)
    return m.group(1) if m else None


def parse_go(pkg_dir):
    """{struct: [(go_name, go_type, json_tag, protobuf_tag, embedded)]}, {named type:
    underlying, with a package alias replaced by its import path}."""
    structs, named = {}, {}
    for fname in sorted(os.listdir(pkg_dir)):
        if (not fname.endswith(".go") or fname.endswith("_test.go")
                or fname.startswith("zz_generated") or fname.startswith("generated.")
                or fname.endswith("_fuzz.go")):
            continue
        text = open(os.path.join(pkg_dir, fname), encoding="utf-8").read()
        text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
        imports = {}
        for alias, path in re.findall(r'^\s*(\w+)?\s*"(k8s\.io/[^"]+)"$', text, re.M):
            imports[alias or path.rsplit("/", 1)[-1]] = path
        lines = text.splitlines()
        i = 0
        while i < len(lines):
            if re.match(r"type (\w+) struct ?\{\}", lines[i]):
                structs[lines[i].split()[1]] = []
                i += 1
                continue
            m = re.match(r"type (\w+) struct \{\s*$", lines[i])
            if not m:
                t = re.match(r"type (\w+) (\S.*?)\s*(//.*)?$", lines[i])
                if t and t.group(2) not in ("struct {", "interface {"):
                    under = t.group(2)
                    q = re.fullmatch(r"(\w+)\.(\w+)", under)
                    if q and q.group(1) in imports:
                        under = imports[q.group(1)] + "." + q.group(2)
                    named[t.group(1)] = under
                i += 1
                continue
            name, fields, depth = m.group(1), [], 1
            i += 1
            while i < len(lines) and depth > 0:
                line = lines[i]
                i += 1
                if line.startswith("}"):
                    break
                body = line.strip()
                if not body or body.startswith("//"):
                    continue
                tag = ""
                if "`" in body:
                    tag = body[body.index("`") + 1:body.rindex("`")]
                    body = body[:body.index("`")]
                body = strip_comment(body).strip()
                if not body:
                    continue
                parts = body.split()
                if len(parts) == 1:  # embedded
                    go_name, go_type = parts[0].split(".")[-1].lstrip("*"), parts[0]
                    embedded = True
                else:
                    go_name, go_type = parts[0], " ".join(parts[1:])
                    embedded = False
                if not go_name or (go_name[0].islower() and not embedded):
                    continue  # unexported: encoding/json skips it
                fields.append((go_name, go_type, parse_tag(tag, "json"),
                               parse_tag(tag, "protobuf"), embedded))
            structs[name] = fields
    return structs, named


def group_name(pkg_dir):
    path = os.path.join(pkg_dir, "register.go")
    if not os.path.exists(path):
        return None
    m = re.search(r'GroupName\s*=\s*"([^"]*)"', open(path, encoding="utf-8").read())
    return m.group(1) if m else None


def import_dir(args, path):
    """The directory of a Go import path in the checkouts."""
    for prefix, root in (("k8s.io/api/", args.api), ("k8s.io/apimachinery/", args.apimachinery),
                         ("k8s.io/apiextensions-apiserver/", args.apiextensions)):
        if path.startswith(prefix):
            return os.path.join(root, path[len(prefix):])
    sys.exit(f"{path}: an import outside the checkouts")


def packages(args):
    """(package dir, apiVersion or None) of every generated.proto the table covers."""
    out = []
    for root in (args.api,):
        for dirpath, _dirs, files in sorted(os.walk(root)):
            if "generated.proto" in files and "testdata" not in dirpath:
                out.append(dirpath)
    am = args.apimachinery
    out += [os.path.join(am, "pkg/apis/meta/v1"), os.path.join(am, "pkg/runtime"),
            os.path.join(am, "pkg/util/intstr"), os.path.join(am, "pkg/api/resource")]
    for v in ("v1", "v1beta1"):
        out.append(os.path.join(args.apiextensions, "pkg/apis/apiextensions", v))
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--minor", required=True)
    p.add_argument("--api", required=True)
    p.add_argument("--apimachinery", required=True)
    p.add_argument("--apiextensions", required=True)
    p.add_argument("--source", action="append", default=[],
                   help="REPO=TAG, recorded in the table")
    p.add_argument("--out", required=True)
    args = p.parse_args()

    protos = {}  # full name -> (package, fields)
    gos = {}  # full name -> go fields
    named_slices = set()
    kinds = []  # (apiVersion, kind, full name)
    for pkg_dir in packages(args):
        package, messages = parse_proto(os.path.join(pkg_dir, "generated.proto"))
        structs, named = parse_go(pkg_dir)
        group = group_name(pkg_dir)
        version = os.path.basename(pkg_dir)
        for name, fields in messages.items():
            full = package + "." + name
            protos[full] = (package, fields)
            if name in structs:
                gos[full] = structs[name]
            elif named.get(name, "").startswith("[]"):
                named_slices.add(full)
            elif "/" in named.get(name, ""):  # type MatchCondition v1.MatchCondition
                path, other = named[name].rsplit(".", 1)
                gos[full] = parse_go(import_dir(args, path))[0][other]
            elif full not in SPECIAL:
                sys.exit(f"{full}: a proto message with no Go struct or slice type")
        if group is None:
            continue
        api_version = f"{group}/{version}" if group else version
        for name, fields in structs.items():
            full = package + "." + name
            if full in protos and any(is_type_meta(f[1]) for f in fields):
                kinds.append((api_version, name, full))
                if package == META[:-1]:
                    kinds.append(("v1", name, full))  # Status and WatchEvent as served

    # metav1.AddToGroupVersion registers these in every group version.
    api_versions = sorted({a for a, _k, f in kinds if not f.startswith(META)})
    for api_version in api_versions:
        own = {k for a, k, _f in kinds if a == api_version}
        for kind in ("WatchEvent", "ListOptions", "GetOptions", "DeleteOptions",
                     "CreateOptions", "UpdateOptions", "PatchOptions"):
            if kind not in own:
                kinds.append((api_version, kind, META + kind))

    names = sorted(protos)
    index = {n: i for i, n in enumerate(names)}

    def resolve(package, t):
        if t in SCALARS:
            return t
        t = t.lstrip(".")
        full = t if "." in t else package + "." + t
        if full not in index:
            sys.exit(f"{package}: unknown proto type {t}")
        return index[full]

    messages = []
    for full in names:
        package, pfields = protos[full]
        if full in SPECIAL:  # the proto fields, which the decoder's writer of each knows
            messages.append([full, SPECIAL[full], [
                [n, num, resolve(package, t), "r" if label == "repeated" else ""]
                for label, t, n, num, _v in pfields]])
            continue
        if full in named_slices:
            (label, t, _n, num, _v), = pfields
            assert label == "repeated" and num == 1, full
            messages.append([full, "array", [["items", 1, resolve(package, t), "r"]]])
            continue
        by_num = {f[3]: f for f in pfields}
        out_fields = []
        for go_name, go_type, jtag, ptag, embedded in gos[full]:
            if jtag == "-" and ptag is None:
                continue
            jname, *jopts = (jtag or "").split(",")
            inline = embedded and not jname  # encoding/json knows no "inline": it promotes
            if is_type_meta(go_type) and ptag is None:
                out_fields.append(["", 0, "string", "t"])
                continue
            if ptag is None or ptag == "-":
                sys.exit(f"{full}.{go_name}: a Go field with no protobuf tag")
            num = int(ptag.split(",")[1])
            if num not in by_num:
                sys.exit(f"{full}.{go_name}: protobuf field {num} not in generated.proto")
            label, t, _pname, _num, value = by_num.pop(num)
            flags = "x" if jtag == "-" else ""
            if label == "repeated":
                flags += "r"
            if label == "map":
                flags += "m"
            if go_type.startswith("*"):
                flags += "p"
            if "omitempty" in jopts:
                flags += "o"
            if inline:
                flags += "i"
            entry = [jname or go_name, num, "map" if label == "map" else resolve(package, t),
                     flags]
            if label == "map":
                if t != "string":
                    sys.exit(f"{full}.{go_name}: map key {t} is not a string")
                entry.append(resolve(package, value))
            out_fields.append(entry)
        if by_num:
            sys.exit(f"{full}: proto fields with no Go field: {sorted(by_num)}")
        messages.append([full, "struct", out_fields])

    # encoding/json drops or shadows a promoted field whose name another field of the
    # object has; the decoder writes every field, so no object may have such a pair.
    def json_names(i):
        _name, _special, fields = messages[i]
        out = []
        for f in fields:
            if "i" in f[3]:
                out += json_names(f[2])
            elif "t" in f[3]:
                out += ["kind", "apiVersion"]
            elif "x" not in f[3]:
                out.append(f[0])
        return out

    for i, (name, special, _fields) in enumerate(messages):
        if special == "struct":
            names_ = json_names(i)
            dups = sorted({n for n in names_ if names_.count(n) > 1})
            if dups:
                sys.exit(f"{name}: JSON names written twice once inline fields are promoted: {dups}")

    table = {
        "minor": args.minor,
        "sources": dict(s.split("=", 1) for s in args.source),
        "messages": messages,
        "kinds": sorted([a, k, index[f]] for a, k, f in kinds),
    }
    with open(args.out, "w", encoding="utf-8") as f:
        f.write('{"minor":%s,"sources":%s,\n"messages":[\n' % (
            json.dumps(table["minor"]), json.dumps(table["sources"], separators=(",", ":"))))
        f.write(",\n".join(json.dumps(m, separators=(",", ":")) for m in messages))
        f.write('],\n"kinds":[\n')
        f.write(",\n".join(json.dumps(k, separators=(",", ":")) for k in table["kinds"]))
        f.write("]}\n")
    print(f"{args.out}: {len(messages)} messages, {len(kinds)} kinds", file=sys.stderr)


if __name__ == "__main__":
    main()
