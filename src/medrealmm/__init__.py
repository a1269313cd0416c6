"""medrealmm: build and run MedRealMM-style multimodal medical consultation benchmarks."""

__version__ = "0.1.0"
