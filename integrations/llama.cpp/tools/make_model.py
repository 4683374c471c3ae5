"""A tiny llama model for the integration's tests, made without a download.

    make_model.py VOCAB.gguf OUT.gguf SEED

The tokenizer is copied from a vocab-only GGUF that llama.cpp's source ships; the
weights are random float32 from SEED. Every seed gives the same shape and the same
general.name ("tiny-llama"): two seeds are two models only their weights tell apart.
4 layers, n_embd 128, 4 heads, 2 KV heads (grouped-query attention), n_ff 256.
"""
import sys

import gguf
import numpy as np

vocab_path, out_path, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
reader = gguf.GGUFReader(vocab_path)
writer = gguf.GGUFWriter(out_path, "llama")
n_embd, n_layer, n_head, n_head_kv, n_ff, n_ctx = 128, 4, 4, 2, 256, 4096

tokens = None
for field in reader.fields.values():
    name = field.name
    if not name.startswith("tokenizer."):
        continue
    vtype = field.types[0]
    if vtype == gguf.GGUFValueType.ARRAY:
        sub = field.types[1]
        if sub == gguf.GGUFValueType.STRING:
            vals = [bytes(field.parts[i]).decode("utf-8", errors="replace") for i in field.data]
        else:
            vals = [field.parts[i].tolist()[0] for i in field.data]
        if name == "tokenizer.ggml.tokens":
            tokens = vals
        writer.add_array(name, vals)
    elif vtype == gguf.GGUFValueType.STRING:
        writer.add_string(name, bytes(field.parts[field.data[0]]).decode())
    else:
        val = field.parts[field.data[0]].tolist()[0]
        if vtype == gguf.GGUFValueType.UINT32:
            writer.add_uint32(name, val)
        elif vtype == gguf.GGUFValueType.INT32:
            writer.add_int32(name, val)
        elif vtype == gguf.GGUFValueType.BOOL:
            writer.add_bool(name, bool(val))
        elif vtype == gguf.GGUFValueType.FLOAT32:
            writer.add_float32(name, val)
        else:
            raise SystemExit(f"{name}: {vtype}")
n_vocab = len(tokens)
writer.add_name("tiny-llama")
writer.add_context_length(n_ctx)
writer.add_embedding_length(n_embd)
writer.add_block_count(n_layer)
writer.add_feed_forward_length(n_ff)
writer.add_head_count(n_head)
writer.add_head_count_kv(n_head_kv)
writer.add_rope_dimension_count(n_embd // n_head)
writer.add_layer_norm_rms_eps(1e-5)
writer.add_file_type(0)

rng = np.random.default_rng(seed)


def t(name, *shape, scale=0.02):
    writer.add_tensor(name, (rng.standard_normal(shape) * scale).astype(np.float32))


def ones(name, n):
    writer.add_tensor(name, np.ones(n, dtype=np.float32))


head_dim = n_embd // n_head
t("token_embd.weight", n_vocab, n_embd)
ones("output_norm.weight", n_embd)
t("output.weight", n_vocab, n_embd)
for i in range(n_layer):
    ones(f"blk.{i}.attn_norm.weight", n_embd)
    t(f"blk.{i}.attn_q.weight", n_embd, n_embd)
    t(f"blk.{i}.attn_k.weight", n_head_kv * head_dim, n_embd)
    t(f"blk.{i}.attn_v.weight", n_head_kv * head_dim, n_embd)
    t(f"blk.{i}.attn_output.weight", n_embd, n_embd)
    ones(f"blk.{i}.ffn_norm.weight", n_embd)
    t(f"blk.{i}.ffn_gate.weight", n_ff, n_embd)
    t(f"blk.{i}.ffn_down.weight", n_embd, n_ff)
    t(f"blk.{i}.ffn_up.weight", n_ff, n_embd)
writer.write_header_to_file()
writer.write_kv_data_to_file()
writer.write_tensors_to_file()
writer.close()
print(out_path, n_vocab)
