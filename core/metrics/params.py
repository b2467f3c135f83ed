"""The parameters the metrics are computed with: the engine passes exactly these to
sacrebleu, rouge-score and NLTK, and :mod:`.signatures` writes them into signatures."""

BLEU_TOKENIZER = "13a"
BLEU_TOKENIZER_CHINESE = "zh"
BLEU_SMOOTH_METHOD = "exp"
BLEU_EFFECTIVE_ORDER = True
CHRF_CHAR_ORDER = 6
CHRF_WORD_ORDER = 2
CHRF_BETA = 2
METEOR_ALPHA = 0.9
METEOR_BETA = 3.0
METEOR_GAMMA = 0.5
