"""The generator of the bundled synthetic demo corpus (``scripts/make_demo_corpus.py``).

The library ships only the generated data (``medrealmm.demo``) and never imports this.
Drawing QR codes needs the dev extras (``qrcode``).
"""
