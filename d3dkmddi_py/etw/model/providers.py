"""Well-known ETW providers by GUID, each with the public page where its GUID and name are published.

``--summary`` names a provider from here when the trace does not name it itself (a TraceLogging
provider carries its own name).  Every row was read from its source, never recalled: a GUID not in a
source below is left unnamed.  Two providers changed GUID between Windows 7 and Windows 10
(Dwm-Core, Win32k, Dwm-Api): both GUIDs are listed, each with the manifest that gives it.  A few rows
are classic event-class GUIDs (KernelTraceControl's), which traces carry where a provider GUID goes.
"""
from __future__ import annotations

from ..._records import dataclass
from .dxgkrnl_manifest import EVENTS as DXGKRNL_EVENTS

_REPNZ = "https://github.com/repnz/etw-providers-docs/blob/d5f68e8acda5da154ab44e405b610dd8c2ba1164/"
# the providers registered on a Windows 10 machine (GUID, manifest or MOF, name), as its tool listed them
WINDOWS_10_LIST = _REPNZ + "FullProviderList"
_PERFVIEW = "https://github.com/microsoft/perfview/blob/f3ec1b38a6d7535e4f878510e5041f9da7d0fdb6/src/TraceEvent/"
PERFVIEW_KERNEL = _PERFVIEW + "Parsers/KernelTraceEventParser.cs"  # ProviderName and ProviderGuid
CLR_MANIFEST = _PERFVIEW + "Parsers/ClrEtwAll.man"  # the CLR's providers: <provider name= guid=>
PERFVIEW_TPL = _PERFVIEW + "Parsers/TplTraceEventParser.cs"
PERFVIEW_FRAMEWORK = _PERFVIEW + "Parsers/FrameworkTraceEventParser.cs"
PERFVIEW_BPERF = _PERFVIEW + "BPerf/BPerfEventSource.cs"  # the KernelTraceControl event-class GUIDs


def _windows7(name: str) -> str:
    return f"{_REPNZ}Manifests-Win7-7600/{name}.xml"


@dataclass(frozen=True)
class Provider:
    guid: str  # lowercase, no braces
    name: str
    source: str  # where the GUID and the name are published together


PROVIDERS = (
    Provider("9e814aad-3204-11d2-9a82-006008a86939", "Windows Kernel", PERFVIEW_KERNEL),
    Provider("802ec45a-1e99-4b83-9920-87c98277ba9d", "Microsoft-Windows-DxgKrnl", WINDOWS_10_LIST),
    Provider("ca11c036-0102-4a2d-a6ad-f03cfed5d3c9", "Microsoft-Windows-DXGI", WINDOWS_10_LIST),
    Provider("783aca0a-790e-4d7f-8451-aa850511c6b9", "Microsoft-Windows-D3D9", WINDOWS_10_LIST),
    Provider("9b7e4c0f-342c-4106-a19f-4f2704f689f0", "Microsoft-Windows-Direct3D10", WINDOWS_10_LIST),
    Provider("9b7e4c8f-342c-4106-a19f-4f2704f689f0", "Microsoft-Windows-Direct3D10_1", WINDOWS_10_LIST),
    Provider("7e7d3382-023c-43cb-95d2-6f0ca6d70381", "Microsoft-Windows-D3D10Level9", WINDOWS_10_LIST),
    Provider("db6f6ddb-ac77-4e88-8253-819df9bbf140", "Microsoft-Windows-Direct3D11", WINDOWS_10_LIST),
    Provider("5d8087dd-3a9b-4f56-90df-49196cdc4f11", "Microsoft-Windows-Direct3D12", WINDOWS_10_LIST),
    Provider("2d4ebca6-ea64-453f-a292-ae2ea0ee513b", "Microsoft-Windows-Direct3DShaderCache", WINDOWS_10_LIST),
    Provider("9e9bba3c-2e38-40cb-99f4-9e8281425164", "Microsoft-Windows-Dwm-Core", WINDOWS_10_LIST),
    Provider("8c9dd1ad-e6e5-4b07-b455-684a9d879900", "Microsoft-Windows-Dwm-Core",
             _windows7("Microsoft-Windows-Dwm-Core")),
    Provider("292a52c4-fa27-4461-b526-54a46430bd54", "Microsoft-Windows-Dwm-Api", WINDOWS_10_LIST),
    Provider("92ae46d7-6d9c-4727-9ed5-e49af9c24cbf", "Microsoft-Windows-Dwm-Api",
             _windows7("Microsoft-Windows-Dwm-Api")),
    Provider("d29d56ea-4867-4221-b02e-cfd998834075", "Microsoft-Windows-Dwm-Dwm", WINDOWS_10_LIST),
    Provider("7d99f6a4-1bec-4c09-9703-3aaa8148347f", "Microsoft-Windows-Dwm-Redir", WINDOWS_10_LIST),
    Provider("a2d1c713-093b-43a7-b445-d09370ec9f47", "Microsoft-Windows-Dwm-Udwm", WINDOWS_10_LIST),
    Provider("8c416c79-d49b-4f01-a467-e56d3aa8234c", "Microsoft-Windows-Win32k", WINDOWS_10_LIST),
    Provider("e7ef96be-969f-414f-97d7-3ddb7b558ccc", "Microsoft-Windows-Win32k", _windows7("Microsoft-Windows-Win32k")),
    Provider("6ece3302-fee1-4ea9-8b88-086d459ed976", "Microsoft-Windows-Display", WINDOWS_10_LIST),
    Provider("728b8c72-0f0f-4071-9bcc-27cb3b6dacbe", "Microsoft-Windows-DXP", WINDOWS_10_LIST),
    Provider("22fb2cd6-0e7b-422b-a0c7-2fad1fd0e716", "Microsoft-Windows-Kernel-Process", WINDOWS_10_LIST),
    Provider("edd08927-9cc4-4e65-b970-c2560fb5c289", "Microsoft-Windows-Kernel-File", WINDOWS_10_LIST),
    Provider("b675ec37-bdb6-4648-bc92-f3fdc74d3ca2", "Microsoft-Windows-Kernel-EventTracing", WINDOWS_10_LIST),
    Provider("d1d93ef7-e1f2-4f45-9943-03d245fe6c00", "Microsoft-Windows-Kernel-Memory", WINDOWS_10_LIST),
    Provider("331c3b3a-2005-44c2-ac5e-77220c37d6b4", "Microsoft-Windows-Kernel-Power", WINDOWS_10_LIST),
    Provider("c7bde69a-e1e0-4177-b6ef-283ad1525271", "Microsoft-Windows-Kernel-Disk", WINDOWS_10_LIST),
    Provider("7dd42a49-5329-4832-8dfd-43d979153a88", "Microsoft-Windows-Kernel-Network", WINDOWS_10_LIST),
    Provider("70eb4f03-c1de-4f73-a051-33d13d5413bd", "Microsoft-Windows-Kernel-Registry", WINDOWS_10_LIST),
    Provider("a68ca8b7-004f-d7b6-a698-07e2de0f1f5d", "Microsoft-Windows-Kernel-General", WINDOWS_10_LIST),
    Provider("15ca44ff-4d7a-4baa-bba5-0998955e531e", "Microsoft-Windows-Kernel-Boot", WINDOWS_10_LIST),
    Provider("9c205a39-1250-487d-abd7-e831c6290539", "Microsoft-Windows-Kernel-PnP", WINDOWS_10_LIST),
    Provider("e02a841c-75a3-4fa7-afc8-ae09cf9b7f23", "Microsoft-Windows-Kernel-Audit-API-Calls", WINDOWS_10_LIST),
    Provider("1c95126e-7eea-49a9-a3fe-a378b03ddb4d", "Microsoft-Windows-DNS-Client", WINDOWS_10_LIST),
    Provider("a0c1853b-5c40-4b15-8766-3cf1c58f985a", "Microsoft-Windows-PowerShell", WINDOWS_10_LIST),
    Provider("2a576b87-09a7-520e-c21a-4942f0271d67", "Microsoft-Antimalware-Scan-Interface", WINDOWS_10_LIST),
    Provider("315a8872-923e-4ea2-9889-33cd4754bf64", "Microsoft-Windows-Immersive-Shell", WINDOWS_10_LIST),
    Provider("e13c0d23-ccbc-4e12-931b-d9cc2eee27e4", "Microsoft-Windows-DotNETRuntime", WINDOWS_10_LIST),
    Provider("a669021c-c450-4609-a035-5af59af4df18", "Microsoft-Windows-DotNETRuntimeRundown", WINDOWS_10_LIST),
    Provider("763fd754-7086-4dfe-95eb-c01a46faf4ca", "Microsoft-Windows-DotNETRuntimePrivate", CLR_MANIFEST),
    Provider("cc2bcbba-16b6-4cf3-8990-d74c2e8af500", "Microsoft-Windows-DotNETRuntimeStress", CLR_MANIFEST),
    Provider("2e5dba47-a3d2-4d16-8ee0-6671ffdcd7b5", "System.Threading.Tasks.TplEventSource", PERFVIEW_TPL),
    Provider("8e9f5090-2d75-4d03-8a81-e5afbf85daf1", "FrameworkEventSource", PERFVIEW_FRAMEWORK),
    Provider("b3e675d7-2554-4f18-830b-2762732560de", "KernelTraceControl ImageId (event class)", PERFVIEW_BPERF),
    Provider("bbccf6c1-6cd1-48c4-80ff-839482e37671", "KernelTraceControl MetaData (event class)", PERFVIEW_BPERF),
    Provider("9b79ee91-b5fd-41c0-a243-4248e266e9d0", "VolumeMapping (event class)", PERFVIEW_BPERF),
)

BY_GUID = {p.guid: p for p in PROVIDERS}


def provider_name(guid: str | None) -> str | None:
    """The published name of a provider GUID (lowercase, no braces), or None when this table has none."""
    known = BY_GUID.get(guid) if guid else None
    return known.name if known is not None else None


def dxgkrnl_event_name(event_id: int) -> str | None:
    """A DxgKrnl event id by name: the manifest's symbol (every event registered here is one of the manifest's)."""
    row = DXGKRNL_EVENTS.get(event_id)
    return None if row is None else row[0]
