#!/usr/bin/env python3
"""Builds a one-layer OCI image archive (oci-layout tar) holding Debian's static busybox, for the containerd
end-to-end tests (scripts/containerd.sh). Nothing is downloaded: the layer is /bin/busybox of busybox-static.

    cri-image.py REF OUT.tar [VERSION] [CONFIG_JSON]

VERSION is written to /etc/image-version (images that differ only in it have different layers and digests);
CONFIG_JSON is merged into the image config (for example '{"Entrypoint": ["/bin/sleep", "2147483647"]}').
Import the archive with `ctr -n k8s.io images import OUT.tar`; its name comes from REF.

    cri-image.py --rootfs DIR REF OUT.tar CONFIG_JSON

The second mode (used by scripts/image.sh) makes the one layer from the directory tree DIR instead (files,
directories and symbolic links, owned by root, modification times 0, in name order), with CONFIG_JSON merged
into the image config the same way.
"""
import os
import gzip
import hashlib
import io
import json
import sys
import tarfile

APPLETS = ["sh", "sleep", "echo", "cat", "ls", "ps", "true", "false", "kill", "wget", "nc", "httpd", "env",
           "id", "date", "touch", "rm", "mkdir", "test", "seq"]


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def entry(name: str, kind=tarfile.REGTYPE, mode=0o644, size=0, link="") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.size, info.linkname, info.mtime = kind, mode, size, link, 0
    return info


def layer(version: str) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for directory in ["bin", "etc", "tmp", "proc", "sys", "dev", "root", "var", "run"]:
            tar.addfile(entry(directory, tarfile.DIRTYPE, 0o1777 if directory == "tmp" else 0o755))
        with open("/bin/busybox", "rb") as binary:
            data = binary.read()
        tar.addfile(entry("bin/busybox", mode=0o755, size=len(data)), io.BytesIO(data))
        for applet in APPLETS:
            tar.addfile(entry("bin/" + applet, tarfile.SYMTYPE, 0o777, link="busybox"))
        files = {
            "etc/passwd": b"root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n",
            "etc/group": b"root:x:0:\nnogroup:x:65534:\n",
            "etc/image-version": version.encode() + b"\n",
        }
        for name, content in files.items():
            tar.addfile(entry(name, size=len(content)), io.BytesIO(content))
    return out.getvalue()


def rootfs_layer(root: str) -> bytes:
    """The layer holding the tree under `root`, reproducibly (sorted, root-owned, mtime 0)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for directory, subdirectories, files in os.walk(root):
            subdirectories.sort()
            for name in sorted(subdirectories + files):
                path = os.path.join(directory, name)
                member = os.path.relpath(path, root)
                status = os.lstat(path)
                mode = status.st_mode & 0o7777
                if os.path.islink(path):
                    tar.addfile(entry(member, tarfile.SYMTYPE, 0o777, link=os.readlink(path)))
                elif os.path.isdir(path):
                    tar.addfile(entry(member, tarfile.DIRTYPE, mode))
                else:
                    with open(path, "rb") as source:
                        data = source.read()
                    tar.addfile(entry(member, mode=mode, size=len(data)), io.BytesIO(data))
    return out.getvalue()


def main() -> None:
    if len(sys.argv) == 6 and sys.argv[1] == "--rootfs":
        root, ref, out, extra = sys.argv[2], sys.argv[3], sys.argv[4], json.loads(sys.argv[5])
        write_archive(ref, out, rootfs_layer(root), extra, "kruise-rs scripts/image.sh", 6)
        return
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    ref, out = sys.argv[1], sys.argv[2]
    version = sys.argv[3] if len(sys.argv) > 3 else "1"
    extra = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {"Cmd": ["/bin/sh"]}
    write_archive(ref, out, layer(version), extra, "kruise-rs scripts/cri-image.py", 9)


def write_archive(ref: str, out: str, layer_tar: bytes, extra: dict, created_by: str, level: int) -> None:
    """Writes the oci-layout archive of the image with the one layer `layer_tar` (gzip `level`) and config
    `extra`."""
    layer_gz = gzip.compress(layer_tar, compresslevel=level, mtime=0)
    config = {
        "created": "1970-01-01T00:00:00Z",
        "architecture": "amd64",
        "os": "linux",
        "config": dict({"Env": ["PATH=/bin"], "WorkingDir": "/"}, **extra),
        "rootfs": {"type": "layers", "diff_ids": [digest(layer_tar)]},
        "history": [{"created": "1970-01-01T00:00:00Z", "created_by": created_by}],
    }
    config_bytes = json.dumps(config, sort_keys=True).encode()
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": digest(config_bytes),
                   "size": len(config_bytes)},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": digest(layer_gz),
                    "size": len(layer_gz)}],
    }
    manifest_bytes = json.dumps(manifest, sort_keys=True).encode()
    index = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "digest": digest(manifest_bytes),
            "size": len(manifest_bytes),
            "platform": {"architecture": "amd64", "os": "linux"},
            "annotations": {"io.containerd.image.name": ref, "org.opencontainers.image.ref.name": ref.rsplit(":", 1)[1]},
        }],
    }
    with tarfile.open(out, "w") as tar:
        def add(name: str, data: bytes) -> None:
            tar.addfile(entry(name, size=len(data)), io.BytesIO(data))
        add("oci-layout", b'{"imageLayoutVersion":"1.0.0"}')
        add("index.json", json.dumps(index).encode())
        for blob in (config_bytes, manifest_bytes, layer_gz):
            add("blobs/sha256/" + hashlib.sha256(blob).hexdigest(), blob)


if __name__ == "__main__":
    main()
