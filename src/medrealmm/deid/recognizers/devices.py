"""Device identifiers and serial numbers (HIPAA's device identifiers): a glucose meter's or a
pump's serial number, a phone's IMEI, a MAC address. After a serial-number label any code
with a digit is taken; a MAC address needs no label (six hex pairs joined by one separator).
A model number (型号) names the product, not the patient's own device, and stays.
"""

from __future__ import annotations

import re

from medrealmm.deid.recognizer import RegexRecognizer, starts_with_one_of
from medrealmm.deid.spans import EntityType

_SERIAL_LABEL = (
    r"序列号|序列號|序号码|机身号|機身號|机身码|設備號|设备号|设备编号|設備編號|设备ID|設備ID|"
    r"出厂编号|出廠編號|仪器编号|儀器編號|IMEI|MEID|IMSI|ICCID|UDID|SN|S/N|"
    r"Serial(?: No\.?| Number)?|"
    r"MAC地址|MAC位址|MAC|蓝牙地址|藍牙地址"
)
_SERIAL_FIRST = starts_with_one_of(_SERIAL_LABEL.replace("(?: No\\.?| Number)?", ""))
DEVICE_SERIAL = RegexRecognizer(
    name="device_serial",
    gate=re.compile(r"号|號|码|碼|ID|IMEI|MEID|IMSI|ICCID|SN|S/N|Serial|MAC|址"),
    type=EntityType.ID,
    patterns=[
        re.compile(
            _SERIAL_FIRST + rf"(?<![A-Za-z])(?:{_SERIAL_LABEL})"
            rf"(?:号码|號碼|号|號|码|碼)?\s*(?:是|为|為|:|：|#)?\s*"
            r"(?P<v>(?=[0-9A-Za-z:\- ]*\d)[0-9A-Za-z](?:[0-9A-Za-z:\-]| (?=\d)){5,40}[0-9A-Za-z])"
            r"(?![0-9A-Za-z])"
        ),
    ],
    group="v",
)
MAC_ADDRESS = RegexRecognizer(
    name="mac_address",
    gate=re.compile(r"[0-9A-Fa-f]{2}[:\-][0-9A-Fa-f]{2}[:\-]"),
    type=EntityType.ID,
    patterns=[
        re.compile(
            r"(?<![0-9A-Za-z:\-])[0-9A-Fa-f]{2}(?P<s>[:\-])[0-9A-Fa-f]{2}"
            r"(?:(?P=s)[0-9A-Fa-f]{2}){4}(?![0-9A-Za-z:\-])"
        )
    ],
)
