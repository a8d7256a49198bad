"""Classifying names with a character-level RNN: names turned into one-hot letter tensors,
an nn.RNN whose final hidden state a Linear layer and LogSoftmax turn into a language,
trained with NLLLoss, SGD and gradient clipping in shuffled mini-batches, then a confusion
matrix on held-out names.

Source: PyTorch tutorials, "NLP From Scratch: Classifying Names with a Character-Level
RNN" (the nn.RNN version). The data/names/*.txt download is replaced by a few names per
language written here; the epochs are cut to a few; the plots are left out.
"""
# compare: masked

import random
import string
import time
import unicodedata

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import Dataset

torch.manual_seed(0)
random.seed(0)
device = torch.device("cpu")

allowed_characters = string.ascii_letters + " .,;'" + "_"
n_letters = len(allowed_characters)


def unicodeToAscii(s):
    return "".join(
        c
        for c in unicodedata.normalize("NFD", s)
        if unicodedata.category(c) != "Mn" and c in allowed_characters
    )


print(f"converting 'Ślusàrski' to {unicodeToAscii('Ślusàrski')}")


def letterToIndex(letter):
    if letter not in allowed_characters:
        return allowed_characters.find("_")
    else:
        return allowed_characters.find(letter)


def lineToTensor(line):
    tensor = torch.zeros(len(line), 1, n_letters)
    for li, letter in enumerate(line):
        tensor[li][0][letterToIndex(letter)] = 1
    return tensor


print(f"The letter 'a' becomes {lineToTensor('a')}")
print(f"The name 'Ahn' becomes {lineToTensor('Ahn').size()}")

NAMES = {
    "English": ["Abbott", "Bradley", "Cooper", "Dawson", "Fletcher", "Gibson", "Harris"],
    "Italian": ["Abate", "Bianchi", "Caruso", "DeLuca", "Esposito", "Ferrari", "Gallo"],
    "Japanese": ["Abe", "Fujita", "Hayashi", "Ito", "Kato", "Matsumoto", "Nakamura"],
    "Polish": ["Adamczyk", "Kowalski", "Nowak", "Ślusàrski", "Wojcik", "Zielinski", "Mazur"],
}


class NamesDataset(Dataset):
    def __init__(self, names):
        self.load_time = time.localtime
        labels_set = set()

        self.data = []
        self.data_tensors = []
        self.labels = []
        self.labels_tensors = []

        for label, lines in names.items():
            labels_set.add(label)
            for name in lines:
                self.data.append(name)
                self.data_tensors.append(lineToTensor(name))
                self.labels.append(label)

        self.labels_uniq = sorted(labels_set)
        for idx in range(len(self.labels)):
            temp_tensor = torch.tensor([self.labels_uniq.index(self.labels[idx])], dtype=torch.long)
            self.labels_tensors.append(temp_tensor)

    def __len__(self):
        return len(self.data)

    def __getitem__(self, idx):
        data_item = self.data[idx]
        data_label = self.labels[idx]
        data_tensor = self.data_tensors[idx]
        label_tensor = self.labels_tensors[idx]

        return label_tensor, data_tensor, data_label, data_item


alldata = NamesDataset(NAMES)
print(f"loaded {len(alldata)} items of data")
print(f"example = {alldata[0][2]}, {alldata[0][3]}, {alldata[0][0]}, {alldata[0][1].shape}")

train_set, test_set = torch.utils.data.random_split(
    alldata, [0.85, 0.15], generator=torch.Generator(device=device).manual_seed(2024)
)
print(f"train examples = {len(train_set)}, validation examples = {len(test_set)}")


class CharRNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super(CharRNN, self).__init__()

        self.rnn = nn.RNN(input_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, line_tensor):
        rnn_out, hidden = self.rnn(line_tensor)
        output = self.h2o(hidden[0])
        output = self.softmax(output)

        return output


n_hidden = 32
rnn = CharRNN(n_letters, n_hidden, len(alldata.labels_uniq))
print(rnn)


def label_from_output(output, output_labels):
    top_n, top_i = output.topk(1)
    label_i = top_i[0].item()
    return output_labels[label_i], label_i


input = lineToTensor("Albert")
output = rnn(input)
print(output.shape)
print(label_from_output(output, alldata.labels_uniq)[0] in alldata.labels_uniq)


def train(
    rnn,
    training_data,
    n_epoch=10,
    n_batch_size=64,
    report_every=50,
    learning_rate=0.2,
    criterion=nn.NLLLoss(),
):
    current_loss = 0
    all_losses = []
    rnn.train()
    optimizer = torch.optim.SGD(rnn.parameters(), lr=learning_rate)

    print(f"training on data set with n = {len(training_data)}")

    for iter in range(1, n_epoch + 1):
        rnn.zero_grad()

        batches = list(range(len(training_data)))
        random.shuffle(batches)
        batches = np.array_split(batches, len(batches) // n_batch_size)

        for idx, batch in enumerate(batches):
            batch_loss = 0
            for i in batch:
                (label_tensor, text_tensor, label, text) = training_data[i]
                output = rnn.forward(text_tensor)
                loss = criterion(output, label_tensor)
                batch_loss += loss

            batch_loss.backward()
            nn.utils.clip_grad_norm_(rnn.parameters(), 3)
            optimizer.step()
            optimizer.zero_grad()

            current_loss += batch_loss.item() / len(batch)

        all_losses.append(current_loss / len(batches))
        if iter % report_every == 0:
            print(f"{iter} ({iter / n_epoch:.0%}): \t average batch loss = {all_losses[-1]}")
        current_loss = 0

    return all_losses


all_losses = train(rnn, train_set, n_epoch=3, n_batch_size=8, learning_rate=0.15, report_every=1)
print(len(all_losses), all(loss > 0 for loss in all_losses))


def evaluate(rnn, testing_data, classes):
    confusion = torch.zeros(len(classes), len(classes))

    rnn.eval()
    with torch.no_grad():
        for i in range(len(testing_data)):
            (label_tensor, text_tensor, label, text) = testing_data[i]
            output = rnn(text_tensor)
            guess, guess_i = label_from_output(output, classes)
            label_i = classes.index(label)
            confusion[label_i][guess_i] += 1

    for i in range(len(classes)):
        denom = confusion[i].sum()
        if denom > 0:
            confusion[i] = confusion[i] / denom

    return confusion


confusion = evaluate(rnn, test_set, classes=alldata.labels_uniq)
print(confusion.shape, int(confusion.sum().round().item()) <= len(alldata.labels_uniq))
