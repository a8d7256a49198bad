"""Training a classifier: the CIFAR-10 tutorial's network, loop, save/load and per-class
accuracy, on generated 32x32 colour images (no download): class k is an image whose
colour channels follow class k's fixed pattern, plus noise. The loaders use worker
processes (num_workers=2), as the tutorial's do.

Source: Deep Learning with PyTorch: A 60 Minute Blitz, "Training a Classifier".
"""
# compare: masked

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.data import Dataset

classes = ("plane", "car", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")


class GeneratedCIFAR(Dataset):
    """Deterministic images: sample i has class i % 10."""

    def __init__(self, size, offset):
        self.size, self.offset = size, offset
        ramp = torch.linspace(0, 1, 32)
        patterns = []
        for k in range(10):
            red = ramp.view(1, 32).expand(32, 32) * (k % 2)
            green = ramp.view(32, 1).expand(32, 32) * ((k // 2) % 2)
            blue = torch.full((32, 32), k / 9)
            patterns.append(torch.stack([red, green, blue]))
        self.patterns = torch.stack(patterns)

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        label = index % 10
        g = torch.Generator().manual_seed(self.offset + index)
        image = 0.7 * self.patterns[label] + 0.3 * torch.rand(3, 32, 32, generator=g)
        return (image - 0.5) / 0.5, label  # transforms.Normalize((0.5,) * 3, (0.5,) * 3)


batch_size = 4
trainset = GeneratedCIFAR(200, 0)
trainloader = torch.utils.data.DataLoader(
    trainset, batch_size=batch_size, shuffle=True, num_workers=2
)
testset = GeneratedCIFAR(40, 10_000)
testloader = torch.utils.data.DataLoader(
    testset, batch_size=batch_size, shuffle=False, num_workers=2
)

# get some random training images
dataiter = iter(trainloader)
images, labels = next(dataiter)
print(images.shape, labels.dtype)  # (the labels of a shuffled batch vary by generator)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)  # flatten all dimensions except batch
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


torch.manual_seed(0)
net = Net()
criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(net.parameters(), lr=0.01, momentum=0.9)

for epoch in range(3):  # loop over the dataset multiple times
    running_loss = 0.0
    for i, data in enumerate(trainloader, 0):
        # get the inputs; data is a list of [inputs, labels]
        inputs, labels = data

        # zero the parameter gradients
        optimizer.zero_grad()

        # forward + backward + optimize
        outputs = net(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()

        # print statistics
        running_loss += loss.item()
        if i % 25 == 24:  # print every 25 mini-batches
            print(f"[{epoch + 1}, {i + 1:5d}] loss: {running_loss / 25:.3f}")
            running_loss = 0.0

print("Finished Training")

PATH = "./cifar_net.pth"
torch.save(net.state_dict(), PATH)

dataiter = iter(testloader)
images, labels = next(dataiter)
print("GroundTruth: ", " ".join(f"{classes[labels[j]]:5s}" for j in range(4)))

net = Net()
net.load_state_dict(torch.load(PATH, weights_only=True))
outputs = net(images)
_, predicted = torch.max(outputs, 1)

correct = 0
total = 0
# since we're not training, we don't need to calculate the gradients for our outputs
with torch.no_grad():
    for data in testloader:
        images, labels = data
        # calculate outputs by running images through the network
        outputs = net(images)
        # the class with the highest energy is what we choose as prediction
        _, predicted = torch.max(outputs.data, 1)
        total += labels.size(0)
        correct += (predicted == labels).sum().item()

print(f"Accuracy of the network on the {total} test images: {100 * correct / total:.1f} %")
print("better than chance:", correct / total > 0.3)

# prepare to count predictions for each class
correct_pred = {classname: 0 for classname in classes}
total_pred = {classname: 0 for classname in classes}

# again no gradients needed
with torch.no_grad():
    for data in testloader:
        images, labels = data
        outputs = net(images)
        _, predictions = torch.max(outputs, 1)
        # collect the correct predictions for each class
        for label, prediction in zip(labels, predictions):
            if label == prediction:
                correct_pred[classes[label]] += 1
            total_pred[classes[label]] += 1


# print accuracy for each class
for classname, correct_count in correct_pred.items():
    accuracy = 100 * float(correct_count) / total_pred[classname]
    print(f"Accuracy for class: {classname:5s} is {accuracy:.1f} %")

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
# Assuming that we are on a CUDA machine, this should print a CUDA device:
print(device)
