"""Values that a printed form's labels say are identifying, whatever the value reads as.

On reports, receipts and app cards an identifier's kind is printed beside it (姓名, 住院号,
送检医生, 床号 …). The text recognizers judge a value by its content and miss rare names, bare
numbers and short bed numbers; the label does not depend on that. A value can sit after the
label on one OCR line (``姓名：张三 性别：男``), in the next cell to the right, or on the line
below (a label above its value). Geometry is measured in the label line's own frame, so a
photographed page turned by tens of degrees still finds its neighbours.
"""

from __future__ import annotations

import re

import numpy as np

from medrealmm.deid.ocr import OcrLine


def _words(block: str) -> tuple[str, ...]:
    return tuple(block.split())


# Labels whose value identifies a person, a place, an institution, a record or a date.
ID_LABELS = _words(
    "患者姓名 病人姓名 姓名 就诊人 受检者 被检者 检查者 患者 病人 交款人 缴费人 付款人 领药人 "
    "联系人 监护人 家属 收款人 收费员 送检医生 申请医生 主治医生 开单医生 报告医生 审核医生 "
    "检验医生 检验医师 经治医生 主管医生 医生 医师 检验者 审核者 报告者 操作者 检查医生 "
    "接诊医生 门诊医生 处方医师 医师签名 药师 护士 记录者 采样者 采集者 接收者 录入者 "
    "调配 核对 发药 审核 "
    "床号 床位 住院号 门诊号 病历号 病案号 ID号 就诊卡号 就诊号 卡号 登记号 检查号 条码号 "
    "标本号 样本号 流水号 票据号码 票据号 发票号码 发票号 医保号 社保号 处方编号 编号 单号 "
    "检验单号 申请单号 报告单号 检查单号 条码 条形码 医保卡号 社保卡号 健康卡号 订单号 "
    "就诊ID 患者ID 病人ID 档案号 影像号 患者编号 "
    "身份证号码 身份证号 身份证 证件号码 证件号 电话号码 联系电话 电话 手机号码 手机号 手机 "
    "联系方式 家庭住址 现住址 联系地址 户籍地址 地址 住址 工作单位 单位地址 工作地址 "
    "籍贯 出生地 "
    "就诊医院 送检医院 送检单位 医疗机构 收款单位 开单科室医院 医院 "
    "送检日期 采样日期 采样时间 采集时间 接收时间 就诊日期 就诊时间 申请日期 申请时间 "
    "报告日期 报告时间 检验日期 检查日期 检查时间 开票日期 收费日期 出生日期 入院日期 "
    "出院日期 预约时间 日期 签名 签字 Name Patient Pat Tel Phone Mobile Address Addr DOB MRN PID "
    "接种日期 接种时间 接种单位 接种医生 接种者 "
    "Hospital Doctor ID"
)
# Labels of clinical or neutral fields: a value stops where one of these starts.
OTHER_LABELS = _words(
    "性别 年龄 科室 科别 病区 标本类型 标本 样本类型 样本 临床诊断 诊断 备注 费别 民族 "
    "婚否 职业 类型 项目 结果 单位 参考范围 参考值 检验项目 医嘱 主诉 身高 体重 血型 Sex Age "
    "疫苗名称 疫苗 剂次 针次 批号 剂量 接种部位 部位"
)
# Bare labels that also begin ordinary sentences (医生您好…), and English words: a label
# only with a colon.
NEEDS_COLON = set(
    _words("医生 医师 患者 病人 手机 卡号 家属 电话 医院 调配 核对 发药 审核 编号 单号 条码 日期")
)
NEEDS_COLON |= {word.casefold() for word in ID_LABELS if word.isascii()}

_LABEL = re.compile(
    "|".join(sorted(map(re.escape, ID_LABELS + OTHER_LABELS), key=len)[::-1]), re.IGNORECASE
)
_COLON_LABEL = re.compile(r"[\u4e00-\u9fff]{2,6}(?=[:：])")
# Whatever comes before it (复诊日期, 采血日期), a field named a date holds one: a label with a
# colon, or alone in its box (a table's header).
_DATE_LABEL = re.compile(r"(?:^|(?<=\s))[\u4e00-\u9fff]{1,4}日期(?=\s*[:：]|\s*$)")
FILLER = " :：.·_-~～^|"
_CLAUSE_END = re.compile(r"[，,；;。、]")
_ID = {word.casefold() for word in ID_LABELS}


def _han(char: str) -> bool:
    return "\u4e00" <= char <= "\u9fff"


def _compact(text: str) -> tuple[str, list[int]]:
    """``text`` without the spaces that justify a label's characters (姓  名), and where each
    kept character came from."""
    kept: list[int] = []
    for i, char in enumerate(text):
        if char.isspace():
            before = text[:i].rstrip()
            after = text[i:].lstrip()
            if before and after and _han(before[-1]) and _han(after[0]):
                continue
        kept.append(i)
    return "".join(text[i] for i in kept), kept


def _labels(text: str) -> list[tuple[int, int, bool]]:
    """(start, end, identifying) of each label in ``text``, known labels first."""
    compact, where = _compact(text)
    found: list[tuple[int, int, bool]] = []
    for match in _LABEL.finditer(compact):
        start, end = where[match.start()], where[match.end() - 1] + 1
        word = match.group().casefold()
        colon = text[end:].lstrip()[:1] in (":", "：")
        after_letter = start > 0 and text[start - 1].isalpha()
        if (word in NEEDS_COLON and not colon) or (word.isascii() and after_letter):
            continue
        if colon or not after_letter:
            found.append((start, end, word in _ID))
    for match in _DATE_LABEL.finditer(text):
        if not any(s < match.end() and match.start() < e for s, e, _ in found):
            found.append((match.start(), match.end(), True))
    for match in _COLON_LABEL.finditer(text):
        if not any(s < match.end() and match.start() < e for s, e, _ in found):
            found.append((match.start(), match.end(), False))
    return sorted(found)


def inline_values(line: OcrLine) -> list[tuple[int, int]]:
    """Character ranges of values printed after an identifying label on the same line."""
    labels = _labels(line.text)
    out = []
    for i, (_, end, identifying) in enumerate(labels):
        stop = labels[i + 1][0] if i + 1 < len(labels) else len(line.text)
        start = end
        while start < stop and line.text[start] in FILLER:
            start += 1
        # 患者：张三，男，45岁 — a value ends at the clause's punctuation.
        found = _CLAUSE_END.search(line.text, start + 1, stop)
        stop = found.start() if found else stop
        if identifying and start < stop:
            out.append((start, stop))
    return out


def bare_label(line: OcrLine) -> bool:
    """A line that is only an identifying label (its value is another OCR box)."""
    text = "".join(line.text.split()).strip(FILLER).casefold()
    if _DATE_LABEL.fullmatch(text):
        return True
    return text in _ID and (text not in NEEDS_COLON or line.text.rstrip().endswith((":", "：")))


def starts_with_label(text: str) -> bool:
    """``text`` opens with a label (identifying or not): a field of a form, not a name."""
    found = _labels(text)
    return bool(found) and found[0][0] == 0


def trailing_label(line: OcrLine) -> bool:
    """A line that ends with an identifying label and no value (``姓名：张三 床号：``): the
    value is the next box to the right, or ink OCR found no line in (a hand-written entry)."""
    labels = _labels(line.text)
    if not labels or not labels[-1][2]:
        return False
    return not line.text[labels[-1][1] :].strip(FILLER)


def _corners(line: OcrLine) -> np.ndarray:
    if line.quad is not None and len(line.quad) >= 4:
        return np.array(line.quad[:4], dtype=float)
    x0, y0, x1, y1 = line.box
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=float)


def page_angle(lines: list[OcrLine]) -> float:
    """The page's tilt (radians), the median over long lines: a short label's own quad is
    a few pixels wide and its angle is noise."""
    angles = []
    for line in lines:
        tl, tr, _, bl = _corners(line)
        length, height = float(np.hypot(*(tr - tl))), float(np.hypot(*(bl - tl)))
        if length >= 4 * max(1.0, height):
            angles.append(float(np.arctan2(tr[1] - tl[1], tr[0] - tl[0])))
    return float(np.median(angles)) if angles else 0.0


def _extent(line: OcrLine, u: np.ndarray, n: np.ndarray) -> tuple[float, float, float, float]:
    """(left, right, top, bottom) of the line along ``u`` and ``n``."""
    pts = _corners(line)
    along, across = pts @ u, pts @ n
    return float(along.min()), float(along.max()), float(across.min()), float(across.max())


def value_line(
    label: OcrLine, lines: list[OcrLine], angle: float = 0.0, below_too: bool = True
) -> OcrLine | None:
    """The box holding a bare label's value: the nearest one to its right on the same row,
    else (``below_too``) the nearest one under it, starting near its left edge (in the
    page's frame)."""
    u = np.array([np.cos(angle), np.sin(angle)])
    n = np.array([-np.sin(angle), np.cos(angle)])
    left, right_edge, top, bottom = _extent(label, u, n)
    height = max(1.0, bottom - top)
    middle = (top + bottom) / 2
    right: list[tuple[float, OcrLine]] = []
    below: list[tuple[float, OcrLine]] = []
    for other in lines:
        if other is label or not other.text.strip(FILLER):
            continue
        o_left, o_right, o_top, o_bottom = _extent(other, u, n)
        if (
            abs((o_top + o_bottom) / 2 - middle) <= 0.6 * height
            and right_edge - height <= o_left <= right_edge + 20 * height
        ):
            right.append((o_left, other))
        elif (
            -0.4 * height <= o_top - bottom <= 1.5 * height
            and o_left <= right_edge + height
            and o_right >= left - height
        ):
            # Under the label, left-aligned (a card) or centred in its column (a table): the
            # nearest row first, the most centred box of it next.
            shift = abs((o_left + o_right) / 2 - (left + right_edge) / 2)
            below.append((o_top - bottom + 0.1 * shift, other))
    for found in (right, below) if below_too else (right,):
        for _, candidate in sorted(found, key=lambda item: item[0])[:1]:
            starts = _labels(candidate.text)
            if not (starts and starts[0][0] == 0):  # the next cell is another label
                return candidate
    return None


def continuation(line: OcrLine, lines: list[OcrLine], angle: float = 0.0) -> list[OcrLine]:
    """Boxes that carry ``line`` on along its row (OCR splits a value at a wide space), up
    to the next label or a gap wider than two glyphs."""
    u = np.array([np.cos(angle), np.sin(angle)])
    n = np.array([-np.sin(angle), np.cos(angle)])
    out: list[OcrLine] = []
    current = line
    while True:
        _, right_edge, top, bottom = _extent(current, u, n)
        height = max(1.0, bottom - top)
        nearest: tuple[float, OcrLine] | None = None
        for other in lines:
            if other is current or other is line or other in out:
                continue
            o_left, _, o_top, o_bottom = _extent(other, u, n)
            same_row = abs((o_top + o_bottom) / 2 - (top + bottom) / 2) <= 0.5 * height
            near = right_edge - height <= o_left <= right_edge + 2 * height
            if same_row and near and (nearest is None or o_left < nearest[0]):
                nearest = (o_left, other)
        if nearest is None:
            return out
        starts = _labels(nearest[1].text)
        if starts and starts[0][0] == 0:
            return out
        current = nearest[1]
        out.append(current)


def wrapped(value: OcrLine, lines: list[OcrLine], angle: float = 0.0) -> list[OcrLine]:
    """Lines a long value wraps onto: right under it, flush with its left edge, at most two,
    and none that opens with a label."""
    u = np.array([np.cos(angle), np.sin(angle)])
    n = np.array([-np.sin(angle), np.cos(angle)])
    out: list[OcrLine] = []
    current = value
    for _ in range(2):
        left, _, top, bottom = _extent(current, u, n)
        height = max(1.0, bottom - top)
        under = [
            other
            for other in lines
            if other is not current and other not in out and other is not value
            for o_left, _, o_top, o_bottom in [_extent(other, u, n)]
            if -0.3 * height <= o_top - bottom <= 0.6 * height
            and abs(o_left - left) <= height
            and o_bottom - o_top <= 1.5 * height
        ]
        if len(under) != 1 or (_labels(under[0].text) and _labels(under[0].text)[0][0] == 0):
            return out
        current = under[0]
        out.append(current)
    return out


def header_row(label: OcrLine, lines: list[OcrLine], angle: float = 0.0) -> bool:
    """``label`` heads a table's column: another box of its row is a label too (a card
    prints one label a row, a table a row of them)."""
    u = np.array([np.cos(angle), np.sin(angle)])
    n = np.array([-np.sin(angle), np.cos(angle)])
    _, _, top, bottom = _extent(label, u, n)
    middle, height = (top + bottom) / 2, max(1.0, bottom - top)
    for other in lines:
        if other is label:
            continue
        _, _, o_top, o_bottom = _extent(other, u, n)
        found = _labels(other.text)
        if abs((o_top + o_bottom) / 2 - middle) <= 0.5 * height and found and found[0][0] == 0:
            return True
    return False


# Rows of a table column followed at most (a vaccination record runs a page long).
MAX_ROWS = 40


def column(first: OcrLine, lines: list[OcrLine], angle: float = 0.0) -> list[OcrLine]:
    """The cells under ``first`` in its column, row after row (each centred within the
    column's width, under the last at most two row heights lower), up to a cell that opens
    with a label or a gap."""
    u = np.array([np.cos(angle), np.sin(angle)])
    n = np.array([-np.sin(angle), np.cos(angle)])
    left, right, top, bottom = _extent(first, u, n)
    height = max(1.0, bottom - top)
    out: list[OcrLine] = []
    for _ in range(MAX_ROWS):
        nearest: tuple[float, OcrLine] | None = None
        for other in lines:
            if other is first or other in out:
                continue
            o_left, o_right, o_top, _ = _extent(other, u, n)
            centre = (o_left + o_right) / 2
            step = o_top - bottom
            in_column = left - height <= centre <= right + height
            nearer = nearest is None or step < nearest[0]
            if in_column and -0.3 * height <= step <= 2 * height and nearer:
                nearest = (step, other)
        if nearest is None:
            return out
        found = _labels(nearest[1].text)
        if found and found[0][0] == 0:
            return out
        out.append(nearest[1])
        _, _, top, bottom = _extent(nearest[1], u, n)
    return out


# A line that names an institution: letterheads and stamps print it alone, or before the
# document's title (…医院检验报告单). Only at the start of a line: in a sentence the
# text recognizers judge it with its context.
_INSTITUTION = re.compile(
    r"^[\u4e00-\u9fffA-Za-z0-9()（）]{2,20}?"
    r"(医院|卫生院|保健院|卫生服务中心|卫生服务站|卫生室|诊所|门诊部|医学中心|医疗中心|体检中心)"
)


# Words of a sentence, not of a name (我去了市医院 is a patient speaking).
_SENTENCE = re.compile(r"[我你他她了去到在的是说看还就要想过]")


def institution_span(line: OcrLine) -> tuple[int, int] | None:
    text = line.text
    lead = len(text) - len(text.lstrip(FILLER))
    match = _INSTITUTION.match(text[lead:])
    if match is None or len(text) - lead - match.end() > 8 or _SENTENCE.search(match.group()):
        return None
    return lead, lead + match.end()
