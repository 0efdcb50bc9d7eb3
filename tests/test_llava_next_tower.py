"""LLaVA-NeXT's vision tower as vLLM builds it (llava.py init_vision_tower_for_llava, llava_next.py, clip.py; read in
the 0.11.0 wheel), worked by hand for llava-hf/llava-v1.6-mistral-7b-hf (CLIP ViT-L/14 at 336 px: hidden 1024, 24
layers, intermediate 4096; vision_feature_layer -2; text hidden 4096).

vision_feature_layer -2 builds 24 - 2 + 1 = 23 layers and no post-layernorm (require_post_norm False). A CLIP layer:
biased q/k/v/o 4 x (1024^2 + 1024), fc1 1024 x 4096 + 4096, fc2 4096 x 1024 + 1024, two LayerNorms 4 x 1024 =
12,596,224; embeddings: Conv2d 3 x 14^2 x 1024 = 602,112 (no bias), class 1,024, positions (24^2 + 1) x 1024 =
590,848, pre_layrnorm 2,048; projector 1024 x 4096 + 4096 + 4096^2 + 4096 = 20,979,712; image_newline 4,096:
311,892,992. The Mistral-7B text model with its 32,064-token vocabulary (untied) 7,242,256,384: 7,554,149,376
parameters, 14.07 GiB in float16.
"""

from __future__ import annotations

import copy

from vramlint.model import ResolveOptions
from vramlint.models import resolve_model
from vramlint.weights import count_parameters


def _facts():
    info, why = resolve_model("llava-hf/llava-v1.6-mistral-7b-hf", ResolveOptions(allow_network=False))
    assert info is not None, why
    assert info.architecture == "LlavaNextForConditionalGeneration"
    return info.extra["facts"]


def test_llava_next_tower_as_vllm_builds_it():
    counted = count_parameters(_facts())
    assert counted.vision == 23 * 12_596_224 + 602_112 + 1_024 + 590_848 + 2_048 + 20_979_712 + 4_096 == 311_892_992
    assert counted.total == 7_554_149_376


def test_the_feature_layer_decides_the_layers_built():
    facts = copy.deepcopy(_facts())
    facts["vision"]["feature_layer"] = -1  # the last layer: all 24 built
    assert count_parameters(facts).vision == 311_892_992 + 12_596_224
