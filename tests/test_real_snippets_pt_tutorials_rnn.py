"""Programs in the style of pytorch/tutorials' intermediate RNN scripts (char-RNN
classification with nn.RNN, char-RNN generation with a hand-written RNN and sampling,
seq2seq translation with a GRU encoder and an attention decoder), run with torch and
with tapegrad; what they print must agree (tests/_snippets.py). Weights are set from
deterministic formulas, data sets are small literals. Written for these tests, not
copied.
"""
import numpy as np

from _snippets import assert_same_output, fill_parameters_float32


# ------------------------------------------------ intermediate/char_rnn_classification
def test_char_rnn_classification_nn_rnn_training_steps():
    def program(torch, print):
        import string
        nn = torch.nn
        letters = string.ascii_letters + " .,;'" + "_"

        def lineToTensor(line):
            tensor = torch.zeros(len(line), 1, len(letters))
            for li, letter in enumerate(line):
                tensor[li][0][letters.find(letter)] = 1
            return tensor

        class CharRNN(nn.Module):
            def __init__(self, input_size, hidden_size, output_size):
                super().__init__()
                self.rnn = nn.RNN(input_size, hidden_size)
                self.h2o = nn.Linear(hidden_size, output_size)
                self.softmax = nn.LogSoftmax(dim=1)

            def forward(self, line_tensor):
                rnn_out, hidden = self.rnn(line_tensor)
                return self.softmax(self.h2o(hidden[0]))

        data = [("Abe", 0), ("Schmidt", 1), ("Rossi", 2), ("Nowak", 1), ("Sato", 0), ("Bianchi", 2)]
        rnn = CharRNN(len(letters), 16, 3)
        fill_parameters_float32(torch, rnn, 0.2)
        print(rnn)
        out = rnn(lineToTensor("Albert"))
        top_n, top_i = out.topk(1)
        print(out, top_i[0].item())
        optimizer = torch.optim.SGD(rnn.parameters(), lr=0.15)
        criterion = nn.NLLLoss()
        rnn.train()
        for epoch in range(3):
            batch_loss = 0
            for name, label in data:
                loss = criterion(rnn(lineToTensor(name)), torch.tensor([label], dtype=torch.long))
                batch_loss += loss
            batch_loss.backward()
            print(nn.utils.clip_grad_norm_(rnn.parameters(), 3))
            optimizer.step()
            optimizer.zero_grad()
            print(f"{epoch} average batch loss = {batch_loss.item() / len(data):.5f}")
        confusion = torch.zeros(3, 3)
        rnn.eval()
        with torch.no_grad():
            for name, label in data:
                guess_i = rnn(lineToTensor(name)).topk(1)[1][0].item()
                confusion[label][guess_i] += 1
        for i in range(3):
            denom = confusion[i].sum()
            if denom > 0:
                confusion[i] = confusion[i] / denom
        print(confusion)

    assert_same_output(program, rtol=2e-4)


# ------------------------------------------------ intermediate/char_rnn_generation
def test_char_rnn_generation_hand_written_rnn_and_sampling():
    def program(torch, print):
        nn = torch.nn
        n_categories, n_letters = 3, 8

        class RNN(nn.Module):
            def __init__(self, input_size, hidden_size, output_size):
                super().__init__()
                self.hidden_size = hidden_size
                self.i2h = nn.Linear(n_categories + input_size + hidden_size, hidden_size)
                self.i2o = nn.Linear(n_categories + input_size + hidden_size, output_size)
                self.o2o = nn.Linear(hidden_size + output_size, output_size)
                self.dropout = nn.Dropout(0.1)
                self.softmax = nn.LogSoftmax(dim=1)

            def forward(self, category, input, hidden):
                input_combined = torch.cat((category, input, hidden), 1)
                hidden = self.i2h(input_combined)
                output = self.i2o(input_combined)
                output = self.o2o(torch.cat((hidden, output), 1))
                return self.softmax(self.dropout(output)), hidden

        rnn = RNN(n_letters, 12, n_letters)
        fill_parameters_float32(torch, rnn, 0.3)
        rnn.dropout.p = 0.0  # no random draws: both libraries see the same numbers
        category = torch.zeros(1, n_categories)
        category[0][1] = 1
        line = [2, 5, 1, 3]
        inp = torch.zeros(len(line), 1, n_letters)
        for li, c in enumerate(line):
            inp[li][0][c] = 1
        target = torch.LongTensor(line[1:] + [n_letters - 1])
        target.unsqueeze_(-1)
        criterion = nn.NLLLoss()
        for step in range(3):
            hidden = torch.zeros(1, 12)
            rnn.zero_grad()
            loss = torch.Tensor([0])
            for i in range(inp.size(0)):
                output, hidden = rnn(category, inp[i], hidden)
                loss += criterion(output, target[i])
            loss.backward()
            for p in rnn.parameters():
                p.data.add_(p.grad.data, alpha=-0.05)
            print(loss.item() / inp.size(0), loss.grad_fn)
        with torch.no_grad():
            hidden = torch.zeros(1, 12)
            x = inp[0]
            name = [2]
            for i in range(6):
                output, hidden = rnn(category, x, hidden)
                topv, topi = output.topk(1)
                topi = topi[0][0]
                if topi == n_letters - 1:
                    break
                name.append(int(topi))
                x = torch.zeros(1, n_letters)
                x[0][topi] = 1
            print(name, topv)

    assert_same_output(program)


# ------------------------------------------------ intermediate/seq2seq_translation
def test_seq2seq_gru_encoder_attention_decoder_training():
    def program(torch, print):
        nn = torch.nn
        F = torch.nn.functional
        data_ = torch.utils.data
        TensorDataset, DataLoader, SequentialSampler = (data_.TensorDataset, data_.DataLoader,
                                                        data_.SequentialSampler)
        MAX_LENGTH, SOS_token, EOS_token, H = 5, 0, 1, 8

        class EncoderRNN(nn.Module):
            def __init__(self, input_size, hidden_size):
                super().__init__()
                self.embedding = nn.Embedding(input_size, hidden_size)
                self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
                self.dropout = nn.Dropout(0.0)

            def forward(self, input):
                return self.gru(self.dropout(self.embedding(input)))

        class BahdanauAttention(nn.Module):
            def __init__(self, hidden_size):
                super().__init__()
                self.Wa = nn.Linear(hidden_size, hidden_size)
                self.Ua = nn.Linear(hidden_size, hidden_size)
                self.Va = nn.Linear(hidden_size, 1)

            def forward(self, query, keys):
                scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
                scores = scores.squeeze(2).unsqueeze(1)
                weights = F.softmax(scores, dim=-1)
                return torch.bmm(weights, keys), weights

        class AttnDecoderRNN(nn.Module):
            def __init__(self, hidden_size, output_size):
                super().__init__()
                self.embedding = nn.Embedding(output_size, hidden_size)
                self.attention = BahdanauAttention(hidden_size)
                self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
                self.out = nn.Linear(hidden_size, output_size)

            def forward(self, encoder_outputs, encoder_hidden, target_tensor=None):
                batch_size = encoder_outputs.size(0)
                decoder_input = torch.empty(batch_size, 1, dtype=torch.long).fill_(SOS_token)
                decoder_hidden = encoder_hidden
                outs, attns = [], []
                for i in range(MAX_LENGTH):
                    embedded = self.embedding(decoder_input)
                    query = decoder_hidden.permute(1, 0, 2)
                    context, attn = self.attention(query, encoder_outputs)
                    output, decoder_hidden = self.gru(torch.cat((embedded, context), dim=2),
                                                      decoder_hidden)
                    output = self.out(output)
                    outs.append(output)
                    attns.append(attn)
                    if target_tensor is not None:
                        decoder_input = target_tensor[:, i].unsqueeze(1)
                    else:
                        _, topi = output.topk(1)
                        decoder_input = topi.squeeze(-1).detach()
                outs = F.log_softmax(torch.cat(outs, dim=1), dim=-1)
                return outs, decoder_hidden, torch.cat(attns, dim=1)

        pairs = np.array([[2, 3, 4, 1, 0], [5, 2, 1, 0, 0], [3, 3, 6, 2, 1], [4, 1, 0, 0, 0]])
        targets = np.array([[2, 4, 1, 0, 0], [3, 5, 6, 1, 0], [6, 1, 0, 0, 0], [2, 2, 3, 4, 1]])
        data = TensorDataset(torch.LongTensor(pairs.astype(np.int32)),
                             torch.LongTensor(targets.astype(np.int32)))
        loader = DataLoader(data, sampler=SequentialSampler(data), batch_size=2)
        encoder, decoder = EncoderRNN(7, H), AttnDecoderRNN(H, 7)
        fill_parameters_float32(torch, encoder, 0.3)
        fill_parameters_float32(torch, decoder, 0.3)
        enc_opt = torch.optim.Adam(encoder.parameters(), lr=0.01)
        dec_opt = torch.optim.Adam(decoder.parameters(), lr=0.01)
        criterion = nn.NLLLoss()
        for epoch in range(3):
            total = 0
            for input_tensor, target_tensor in loader:
                enc_opt.zero_grad()
                dec_opt.zero_grad()
                encoder_outputs, encoder_hidden = encoder(input_tensor)
                decoder_outputs, _, _ = decoder(encoder_outputs, encoder_hidden, target_tensor)
                loss = criterion(decoder_outputs.view(-1, decoder_outputs.size(-1)),
                                 target_tensor.view(-1))
                loss.backward()
                enc_opt.step()
                dec_opt.step()
                total += loss.item()
            print("%.5f" % (total / len(loader)))
        with torch.no_grad():
            eo, eh = encoder(torch.tensor([2, 3, 1], dtype=torch.long).view(1, -1))
            out, _, attn = decoder(eo, eh)
            _, topi = out.topk(1)
            print(topi.squeeze(), attn.shape, attn.sum(-1))

    assert_same_output(program, rtol=2e-4, atol=1e-5)
