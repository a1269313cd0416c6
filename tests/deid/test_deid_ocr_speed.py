"""The OCR speed-ups read what rapidocr's own models and recognizer read."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from PIL import Image, ImageDraw, ImageFont

from medrealmm.deid import ocr
from medrealmm.deid.onnx_fold import fold
from medrealmm.fonts import require_cjk_font

MODELS = Path(__import__("rapidocr_onnxruntime").__file__).parent / "models"


def _session(model: bytes | str) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.log_severity_level = 4
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


@pytest.mark.parametrize(
    ("name", "shape"),
    [
        ("ch_PP-OCRv4_rec_infer.onnx", (2, 3, 48, 320)),
        ("ch_PP-OCRv4_det_infer.onnx", (1, 3, 160, 224)),
        ("ch_ppocr_mobile_v2.0_cls_infer.onnx", (2, 3, 48, 192)),
    ],
)
def test_a_folded_model_computes_what_the_stock_one_does(name: str, shape: tuple) -> None:
    path = MODELS / name
    folded, made = fold(path.read_bytes())
    assert made["hard_swish"] > 0  # the pattern was found, not passed over
    x = np.random.default_rng(0).uniform(-1, 1, shape).astype(np.float32)
    stock, fast = _session(str(path)), _session(folded)
    want = stock.run(None, {stock.get_inputs()[0].name: x})[0]
    got = fast.run(None, {fast.get_inputs()[0].name: x})[0]
    assert np.allclose(got, want, atol=1e-4)


def _lines(texts: list[str]) -> list[np.ndarray]:
    font = ImageFont.truetype(str(require_cjk_font()), 24)
    crops = []
    for text in texts:
        width = int(font.getlength(text)) + 16
        img = Image.new("RGB", (width, 36), (250, 250, 250))
        ImageDraw.Draw(img).text((8, 4), text, font=font, fill=(20, 20, 20))
        crops.append(np.array(img)[:, :, ::-1].copy())
    return crops


def test_recognize_reads_as_rapidocr_does_and_a_repeat_from_its_cache() -> None:
    engine = ocr._engine()
    crops = _lines(["姓名：", "检验项目 结果 单位 参考范围", "白细胞计数 6.5", "姓名："] * 2)
    crops.append(_lines(["报告日期：2024-06-11 09:30 审核者：李明 检验者：王芳 备注：无"])[0])
    want, _ = engine.text_rec(crops, True)  # type: ignore[attr-defined]
    ocr.forget_readings()
    first = ocr.recognize(engine, crops)
    assert len(ocr._READINGS) < len(crops)  # repeats at one padded width are read once
    again = ocr.recognize(engine, crops)  # every reading from the cache
    for reading in (first, again):
        assert [(r[0], r[1]) for r in reading] == [(w[0], w[1]) for w in want]
        assert [r[2][2] for r in reading] == [w[2][2] for w in want]  # character columns


def test_the_detectors_input_is_the_stock_preprocessing_bit_for_bit() -> None:
    detector = ocr._engine().text_det  # type: ignore[attr-defined]
    page = np.random.default_rng(2).integers(0, 256, (300, 410, 3), dtype=np.uint8)
    stock = type(detector).get_preprocess(detector, 410)(page)
    assert np.array_equal(detector.get_preprocess(410)(page), stock)
