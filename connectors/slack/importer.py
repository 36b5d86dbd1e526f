"""Slack's standard export: a zip (or its unpacked folder) with users.json, channels.json,
groups.json and one folder of day files per channel."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from almanac.models import Tenant
from connectors.slack.normalize import (
    SlackChannel,
    SlackUser,
    member_handles,
    message_payloads,
    user_from_api,
    users_record,
)


class ExportReader:
    """A Slack export: a .zip file or its unpacked folder."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        if not self.path.exists():
            raise ValueError(f"{path}: no such file or folder")
        try:
            self.zip = zipfile.ZipFile(self.path) if self.path.is_file() else None
        except zipfile.BadZipFile as exc:
            raise ValueError(
                f"{path}: not a zip file (a Slack export is a .zip or its unpacked folder)"
            ) from exc
        names = (
            self.zip.namelist() if self.zip else [str(p.relative_to(self.path)) for p in self.path.rglob("*")]
        )
        self.names = sorted(n.replace("\\", "/") for n in names)
        # Some exports wrap everything in one top folder.
        self.prefix = ""
        if "users.json" not in self.names:
            for name in self.names:
                if name.endswith("/users.json") and name.count("/") == 1:
                    self.prefix = name[: -len("users.json")]
        if not any(self.prefix + n in self.names for n in ("users.json", "channels.json", "groups.json")):
            raise ValueError(f"{path}: not a Slack export (no users.json or channels.json in it)")

    def read_json(self, name: str, default=None):
        full = self.prefix + name
        if full not in self.names:
            return default
        data = self.zip.read(full) if self.zip else (self.path / full).read_bytes()
        return json.loads(data.decode("utf-8"))

    def day_files(self, channel_name: str) -> list[str]:
        folder = f"{self.prefix}{channel_name}/"
        return sorted(
            n[len(self.prefix) :] for n in self.names if n.startswith(folder) and n.endswith(".json")
        )


def export_channels(reader: ExportReader, users: dict[str, SlackUser]) -> list[SlackChannel]:
    channels = []
    for filename, public in (("channels.json", True), ("groups.json", False)):
        for data in reader.read_json(filename, []) or []:
            members = data.get("members")
            channels.append(
                SlackChannel(
                    id=data["id"],
                    name=data.get("name", data["id"]),
                    public=public and not data.get("is_private", False),
                    members=member_handles(members, users) if members is not None else None,
                    users=users,
                )
            )
    return channels


def export_payloads(*, tenant: Tenant, path: str | Path, source_name: str = "slack"):
    """Events of a Slack export, channel by channel, oldest message first. Messages get
    permalinks when the source names its workspace (`config.workspace_url`): an export
    does not say it."""
    from connectors.models import Source

    reader = ExportReader(path)
    users = {u["id"]: user_from_api(u) for u in reader.read_json("users.json", []) or []}
    users_record(tenant=tenant, users=users)
    source = Source.objects.filter(tenant=tenant, name=source_name).only("config").first()
    workspace_url = str((source.config or {}).get("workspace_url") or "") if source else ""
    for channel in export_channels(reader, users):
        channel.workspace_url = workspace_url
        messages = []
        for day in reader.day_files(channel.name):
            messages.extend(reader.read_json(day, []) or [])
        messages.sort(key=lambda m: float(m.get("ts", 0)))
        for message in messages:
            yield from message_payloads(source_name=source_name, channel=channel, message=message)
